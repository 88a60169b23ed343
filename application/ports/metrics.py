"""What the service tells its operator's metrics: one method per thing that happened.

Every label value is bounded: an agent id, a model profile's name, a status, a purpose, a tool's name
(one the turn offered; "unknown" otherwise), an outcome or a store. Never a user id, a conversation
id or anything a client wrote, so one tenant's traffic cannot grow the series without bound.
Recording never fails and never waits: a metric is not worth a turn.
"""

from enum import StrEnum
from typing import Protocol

from domain.conversations.messages import Usage


class ModelPurpose(StrEnum):
    """Why a model was called."""

    CHAT = "chat"  # a turn's own calls
    SUMMARY = "summary"  # the rolling summary and archive entries of memory upkeep
    ENTITIES = "entities"  # entity extraction
    TITLE = "title"  # a conversation's title
    FOLLOW_UPS = "follow_ups"  # the questions suggested after an answer
    EMBEDDINGS = "embeddings"  # vectors of an embedding model


class ModelOutcome(StrEnum):
    OK = "ok"
    ERROR = "error"  # the model failed
    CANCELLED = "cancelled"  # the caller stopped reading: a stop, a timeout, a shutdown


UNKNOWN_TOOL = "unknown"  # the label of a call to a tool the turn did not offer


class Metrics(Protocol):
    def turn_started(self, agent: str, profile: str) -> None:
        """A turn began running (it counts as active until `turn_ended`)."""
        ...

    def turn_ended(self, agent: str, profile: str, status: str, seconds: float) -> None:
        """A turn ended with `status` (normal, stop, timeout, error) after `seconds`."""
        ...

    def first_token(self, agent: str, profile: str, seconds: float) -> None:
        """The answer's first text went out `seconds` into its turn."""
        ...

    def model_call(self, purpose: ModelPurpose, profile: str, outcome: ModelOutcome, usage: Usage | None) -> None:
        """A model call ended; `usage` is what it consumed (None: unknown, e.g. an embedding call)."""
        ...

    def tool_call(self, tool: str, outcome: str) -> None:
        """A tool call ended: `outcome` is "ok" or its `ToolFailure`, after any retries."""
        ...

    def event_appended(self, seconds: float) -> None:
        """One append of a turn's events to its log took `seconds`."""
        ...

    def store_error(self, store: str) -> None:
        """A backing store failed: `database`, `event_store`, `memory_store` or `redis`."""
        ...

    def stream_opened(self) -> None: ...

    def stream_closed(self) -> None: ...

    def upkeep_lag(self, seconds: float) -> None:
        """The age of this process's oldest memory upkeep not finished yet (0: none)."""
        ...

    def request_limited(self, limit: str, scope: str = "") -> None:
        """A request was refused by the named limit (e.g. rpm, concurrent_turns, tokens_per_day) of a
        `scope` (key, agent; empty where the limit's name says it)."""
        ...

    def budget_used(self, scope: str, agent: str, ratio: float) -> None:
        """A turn of `agent` was checked against a budget (`scope`: account_daily, account_monthly,
        agent_daily, agent_monthly), used at `ratio` (1: spent)."""
        ...

    def budget_alert(self, scope: str, agent: str, level: str) -> None:
        """A turn of `agent` started with a budget nearly spent (`warning`), or was refused (`exceeded`)."""
        ...


class MetricsPage(Protocol):
    def render(self) -> tuple[bytes, str]:
        """The metrics in an exposition format, and its content type."""
        ...
