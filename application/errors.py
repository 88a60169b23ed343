"""Every error of the application layer: what use cases raise and adapters translate vendor
exceptions into.

Each `ApplicationError` carries a stable `code` for API clients and a readable `message`; the
HTTP edge maps each class to its status in one table (interfaces/http/errors.py).
`ToolCallFailed` is not shown to clients: the tool failure policy turns it into text for the model.
"""

from domain.tools.calls import ToolFailure
from domain.workflows.problems import Problem


class ApplicationError(Exception):
    code = "internal_error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidInput(ApplicationError):
    code = "invalid_input"


class PayloadTooLarge(InvalidInput):
    """A body or document over its size limit."""

    code = "payload_too_large"


class InvalidParameter(InvalidInput):
    """A parameter whose value is wrong, named by `param` (OpenAI's errors name it)."""

    code = "invalid_parameter"

    def __init__(self, message: str, param: str) -> None:
        super().__init__(message)
        self.param = param


class UnsupportedMediaType(InvalidInput):
    """A document of a type that is not accepted."""

    code = "unsupported_media_type"


class InvalidWorkflow(InvalidInput):
    """A workflow graph that cannot be saved or published; `problems` names each by its path."""

    code = "invalid_workflow"

    def __init__(self, message: str, problems: tuple[Problem, ...]) -> None:
        super().__init__(message)
        self.problems = problems


class MalformedRequest(ApplicationError):
    """A header or parameter that cannot even be parsed, e.g. a Last-Event-ID that is not a number."""

    code = "malformed_request"


class NotFound(ApplicationError):
    code = "not_found"


class ModelNotFound(NotFound):
    """/v1: the `model` names no agent the caller may use."""

    code = "model_not_found"


class UnsupportedParameter(MalformedRequest):
    """/v1: a request parameter memagent does not offer (client-side tools, n > 1…); `param` names it."""

    code = "unsupported_parameter"

    def __init__(self, message: str, param: str) -> None:
        super().__init__(message)
        self.param = param


class Conflict(ApplicationError):
    code = "conflict"


class NotPublished(Conflict):
    """An agent asked to run its published config before it has any."""

    code = "not_published"


class RateLimited(ApplicationError):
    """A limit on turns is reached (per minute, running at once, tokens per day); `retry_after`: seconds
    until it has room again, as far as the counters know."""

    code = "rate_limited"

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class ModelError(ApplicationError):
    """The model failed: unreachable, erroring, timing out or sending garbage."""

    code = "model_error"


class ModelNotReached(ModelError):
    """The call failed before the model server sent any of an answer (refused, DNS, TLS, a timeout
    or a dropped connection before the first chunk, or an HTTP error): no model ran, nothing is
    billed. Clients see a `ModelError` like any other."""


class InvalidOutput(ApplicationError):
    """The model's final answer did not match the requested structured output, after one repair."""

    code = "invalid_output"


class StoreUnavailable(ApplicationError):
    """The message store (database) could not be used."""

    code = "store_unavailable"


class MemoryUnavailable(ApplicationError):
    """The memory store (e.g. Redis) could not be used."""

    code = "memory_unavailable"


class UpkeepBusy(MemoryUnavailable):
    """Another worker held a conversation's upkeep lock for longer than we would wait."""

    code = "memory_busy"


class EventStoreUnavailable(ApplicationError):
    """The event store could not be used: a turn's event log, its task record (owner, stop flag) or
    its presence beats. One backend holds all three (in-process or Redis)."""

    code = "event_log_unavailable"


class MalformedRecord(ApplicationError):
    """A stored record cannot be used as it is, e.g. a conversation's history that does not
    alternate user/assistant ("history message list format error")."""

    code = "history_format_error"


class Unauthorized(ApplicationError):
    """The request carries no valid API key. The message never repeats the key sent."""

    code = "unauthorized"


class Forbidden(ApplicationError):
    """The key is valid but may not do this (an agent key outside what it is for)."""

    code = "forbidden"


class NodeFailed(ApplicationError):
    """A workflow node's work failed: a template, code in the sandbox, an outbound HTTP request.
    The node's `retry` and `on_error` decide what the run does with it."""

    code = "node_failed"


class ToolCallFailed(Exception):
    """Raised by a ToolBox when a call fails in a way the tool failure policy knows."""

    def __init__(self, failure: ToolFailure, detail: str) -> None:
        super().__init__(detail)
        self.failure = failure
        self.detail = detail
