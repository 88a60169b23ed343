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


class MalformedRequest(ApplicationError):
    """A header or parameter that cannot even be parsed, e.g. a Last-Event-ID that is not a number."""

    code = "malformed_request"


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


class Unauthorized(ApplicationError):
    """The request carries no valid API key. The message never repeats the key sent."""

    code = "unauthorized"
