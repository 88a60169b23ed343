"""Agents: the aggregate with its draft and versions, its config and the config's JSON codec,
keyword review, and agents' names as OpenAI models."""
