"""Errors that use cases raise and adapters translate vendor exceptions into.

Each carries a stable `code` for API clients and a readable `message`.
"""


class ApplicationError(Exception):
    code = "internal_error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidInput(ApplicationError):
    code = "invalid_input"


class NotFound(ApplicationError):
    code = "not_found"


class Conflict(ApplicationError):
    code = "conflict"


class ModelError(ApplicationError):
    """The model failed: unreachable, erroring, timing out or sending garbage."""

    code = "model_error"


class StoreUnavailable(ApplicationError):
    """The message store (database) could not be used."""

    code = "store_unavailable"


class MemoryUnavailable(ApplicationError):
    """The memory store (e.g. Redis) could not be used."""

    code = "memory_unavailable"


class EventLogUnavailable(ApplicationError):
    """The event log or task control (e.g. Redis) could not be used."""

    code = "event_log_unavailable"
