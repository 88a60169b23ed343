"""Whether the service can serve: readiness of its backends (liveness is the route's own)."""
