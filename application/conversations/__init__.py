"""Conversations as their owner reads them."""

from application.conversations.read_history import ReadHistory

__all__ = ["ReadHistory"]
