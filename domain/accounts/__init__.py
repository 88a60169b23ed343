"""Accounts: API keys and owners, who may see what (viewers), and rate limits."""
