"""Adapters that write about a conversation: its title and follow-up questions (over a model, or offline)."""
