"""The rate-limit counters: in Redis (shared by workers) or in this process."""
