"""EventLog and TaskControl adapters: in-process (embedded default) and Redis."""
