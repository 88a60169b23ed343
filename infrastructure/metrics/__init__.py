"""The metrics adapters (Prometheus, in-process) and the decorators that meter other ports."""
