"""The model-call ledger's use cases: recording every call, reading it back, budgets."""
