"""MemoryStore adapters: in-process (embedded default) and Redis."""
