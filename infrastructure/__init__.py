"""Adapters: each implements one application port with one technology."""
