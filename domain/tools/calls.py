"""Tools: what a model may call, a call, its result, and the failure policy."""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from domain.errors import DomainError

if TYPE_CHECKING:
    from collections.abc import Mapping


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool as a model is offered it. `sequential`: its calls change something (a booking, a
    file) and must not overlap: they run one after another, after the round's other calls."""

    name: str
    description: str
    parameters: Mapping[str, Any] = field(default_factory=lambda: {"type": "object"})
    sequential: bool = False

    def __post_init__(self) -> None:
        if not self.name or not all(c.isalnum() or c in "_-." for c in self.name):
            raise DomainError(f"invalid tool name: {self.name!r}")
        if self.parameters.get("type") != "object":
            raise DomainError(f"tool {self.name} parameters must be a JSON Schema object")


# A model's tool call whose arguments were not a JSON object keeps the raw text under this key,
# so the model can be told what was wrong instead of the tool running with no arguments.
INVALID_ARGUMENTS_KEY = "_invalid_json_arguments"


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_arguments(raw: str) -> dict[str, Any]:
    """A call's arguments as written (JSON text): `{}` for none (some servers send ""), the object,
    or, when they are no JSON object, the raw text under INVALID_ARGUMENTS_KEY."""
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw, parse_constant=_no_constant)
    except (ValueError, RecursionError):  # not JSON, NaN/Infinity (not JSON either), or nested too deep
        return {INVALID_ARGUMENTS_KEY: raw}
    return value if isinstance(value, dict) else {INVALID_ARGUMENTS_KEY: raw}


@dataclass(frozen=True, slots=True)
class ToolCall:
    id: str
    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)

    @property
    def has_unparseable_arguments(self) -> bool:
        return INVALID_ARGUMENTS_KEY in self.arguments


class ToolFailure(enum.StrEnum):
    """Why a tool call failed; each kind has its own policy."""

    INVALID_ARGUMENTS = "invalid_arguments"
    TIMEOUT = "timeout"
    PERMISSION_DENIED = "permission_denied"
    UNAVAILABLE = "unavailable"
    UNKNOWN_TOOL = "unknown_tool"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class ToolResult:
    call_id: str
    name: str
    output: str
    failure: ToolFailure | None = None

    @property
    def is_error(self) -> bool:
        return self.failure is not None


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Timeouts are retried `timeout_retries` times, `retry_delay` seconds apart."""

    timeout_retries: int = 2
    retry_delay: float = 1.0

    def should_retry(self, failure: ToolFailure, attempt: int) -> bool:
        """`attempt` counts from 1 for the first call."""
        return failure is ToolFailure.TIMEOUT and attempt <= self.timeout_retries


def failure_result(call: ToolCall, failure: ToolFailure, detail: str = "") -> ToolResult:
    """What the model sees of a failure: plain language, never a stack trace."""
    return ToolResult(call.id, call.name, _explain(call.name, failure, detail), failure)


def _plain(detail: str) -> str:
    """One readable line of a detail; of a traceback, its last line (the error itself)."""
    lines = [line.strip() for line in detail.strip().splitlines() if line.strip()]
    if not lines:
        return ""
    line = lines[-1] if lines[0].startswith("Traceback") else lines[0]
    return line[:300].rstrip(".")


def _explain(name: str, failure: ToolFailure, detail: str) -> str:
    name = name[:64]
    first_line = _plain(detail)
    match failure:
        case ToolFailure.INVALID_ARGUMENTS:
            why = f": {first_line}" if first_line else ""
            return f"The arguments for tool '{name}' are invalid{why}. Fix them and try again."
        case ToolFailure.TIMEOUT | ToolFailure.UNAVAILABLE:
            return f"Tool '{name}' is temporarily unavailable. Answer without it."
        case ToolFailure.PERMISSION_DENIED:
            return f"Permission to use tool '{name}' was denied. Do not try it again."
        case ToolFailure.UNKNOWN_TOOL:
            return f"There is no tool named '{name}'. Use only the tools you were given."
        case _:
            return f"Tool '{name}' failed: {first_line or 'an unexpected error'}."
