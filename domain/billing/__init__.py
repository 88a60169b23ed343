"""Billing: the model-call ledger's entries, budgets, and amounts of money as people read them."""
