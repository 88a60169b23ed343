"""Conversation, Message (the record of one turn) and its steps."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from domain.errors import DomainError
from domain.messages import Usage

if TYPE_CHECKING:
    from collections.abc import Mapping
    from datetime import datetime

    from domain.ids import AppId, ConversationId, MessageId, OwnerId, TaskId, ThoughtId


def _aware(value: datetime, what: str) -> None:
    if value.tzinfo is None:
        raise DomainError(f"{what} must be timezone-aware")


@dataclass(frozen=True, slots=True)
class Conversation:
    id: ConversationId
    app_id: AppId
    owner: OwnerId
    created_at: datetime
    updated_at: datetime
    summary: str = ""
    deleted_at: datetime | None = None
    is_debug: bool = False  # a debugger conversation (the draft's), kept apart from the published ones

    def __post_init__(self) -> None:
        if not self.owner:
            raise DomainError("a conversation needs an owner")
        _aware(self.created_at, "created_at")
        _aware(self.updated_at, "updated_at")

    def is_visible_to(self, owner: OwnerId) -> bool:
        """Only the owner sees a conversation, and nobody sees a deleted one."""
        return self.owner == owner and self.deleted_at is None

    def with_summary(self, summary: str, at: datetime) -> Conversation:
        return replace(self, summary=summary, updated_at=at)


class MessageStatus(enum.StrEnum):
    RUNNING = "running"
    NORMAL = "normal"
    STOP = "stop"
    TIMEOUT = "timeout"
    ERROR = "error"

    @classmethod
    def ended_by(cls, event: str) -> MessageStatus:
        """The status a turn's terminal event (`agent_end`, `stop`, `timeout`, `error`) stands for."""
        status = _ENDED_BY.get(event)
        if status is None:
            raise DomainError(f"{event!r} is not a terminal event")
        return status


_ENDED_BY = {
    "agent_end": MessageStatus.NORMAL, "stop": MessageStatus.STOP, "timeout": MessageStatus.TIMEOUT,
    "error": MessageStatus.ERROR,
}


@dataclass(frozen=True, slots=True)
class Message:
    """The record of one turn: the user's query, then its outcome."""

    id: MessageId
    conversation_id: ConversationId
    owner: OwnerId
    task_id: TaskId
    query: str
    created_at: datetime
    updated_at: datetime
    image_urls: tuple[str, ...] = ()
    answer: str = ""
    status: MessageStatus = MessageStatus.RUNNING
    error: str = ""
    prompt: str = ""
    usage: Usage = field(default_factory=Usage)
    latency: float = 0.0
    # What the turn ran: the agent's published version, or (debugger) its draft revision, and where it came in.
    agent_version: int | None = None
    draft_revision: int | None = None
    entry_point: str = "api"

    def __post_init__(self) -> None:
        if not self.query.strip():
            raise DomainError("a message needs a non-empty query")
        _aware(self.created_at, "created_at")
        _aware(self.updated_at, "updated_at")
        if self.latency < 0:
            raise DomainError("latency cannot be negative")

    @property
    def is_completed_turn(self) -> bool:
        """Only these turns are history: finished normally with an answer."""
        return self.status is MessageStatus.NORMAL and bool(self.answer.strip())

    def finish(self, outcome: TurnOutcome, at: datetime) -> Message:
        if self.status is not MessageStatus.RUNNING:
            raise DomainError(f"message {self.id} is already finished ({self.status})")
        if outcome.status is MessageStatus.RUNNING:
            raise DomainError("a turn cannot finish as running")
        return replace(
            self,
            answer=outcome.answer,
            status=outcome.status,
            error=outcome.error,
            prompt=outcome.prompt,
            usage=outcome.usage,
            latency=outcome.latency,
            updated_at=at,
        )


@dataclass(frozen=True, slots=True)
class TurnOutcome:
    answer: str
    status: MessageStatus
    usage: Usage
    latency: float
    prompt: str = ""
    error: str = ""


@dataclass(frozen=True, slots=True)
class MessageAgentThought:
    """One persisted step of a turn, ordered by `position`."""

    id: ThoughtId
    message_id: MessageId
    position: int
    event: str
    created_at: datetime
    thought: str = ""
    tool: str = ""
    tool_input: Mapping[str, Any] = field(default_factory=dict)
    observation: str = ""
    prompt: str = ""
    answer: str = ""
    usage: Usage = field(default_factory=Usage)
    latency: float = 0.0

    def __post_init__(self) -> None:
        if self.position < 0:
            raise DomainError("a step position cannot be negative")
