"""memagent's agents as A2A servers (a2a-sdk): `/a2a/{agent}`, one task per chat turn."""
