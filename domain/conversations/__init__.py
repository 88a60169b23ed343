"""Conversations: conversations and messages (the turn's record), message blocks, a turn's events
(thoughts), what may stream, prompt assembly, structured output, and OpenAI requests as turns."""
