"""Conversation, Message (the record of one turn) and its steps."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from domain.conversations.messages import Usage
from domain.errors import DomainError
from domain.ids import DEFAULT_AGENT, AppId, EndUserId
from domain.text import text_problem

if TYPE_CHECKING:
    from collections.abc import Mapping
    from datetime import datetime

    from domain.ids import ConversationId, MessageId, OwnerId, TaskId, ThoughtId

MAX_TITLE_CHARS = 200
MAX_NOTE_CHARS = 2000
MAX_FOLLOW_UPS = 3


def _aware(value: datetime, what: str) -> None:
    if value.tzinfo is None:
        raise DomainError(f"{what} must be timezone-aware")


def check_title(title: str) -> str:
    """A conversation's title: one line of 1 to 200 characters, white space folded."""
    problem = text_problem(title)
    if problem:
        raise DomainError(f"the title: {problem}")
    folded = " ".join(title.split())
    if not folded or len(folded) > MAX_TITLE_CHARS:
        raise DomainError(f"a title must be 1 to {MAX_TITLE_CHARS} characters besides white space")
    return folded




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
    # The request's `user`; ACCOUNT_ITSELF ("", which no `user` can be): the account chats as itself.
    end_user: EndUserId = EndUserId("")
    title: str = ""
    title_by_user: bool = False  # a title set by hand wins over auto-titling for good
    pinned: bool = False
    # Read-model figures, kept by the store: the newest turn's time and how many turns there are.
    last_active_at: datetime | None = None
    message_count: int = 0
    # The fingerprint of the history an OpenAI client brought when it began this conversation
    # (domain.conversations.chat_completions): its turns continue that history, so the client finds it again.
    history_prefix: str = ""

    def __post_init__(self) -> None:
        if not self.owner:
            raise DomainError("a conversation needs an owner")
        _aware(self.created_at, "created_at")
        _aware(self.updated_at, "updated_at")
        if self.last_active_at is None:
            object.__setattr__(self, "last_active_at", self.created_at)
        if self.message_count < 0:
            raise DomainError("a message count cannot be negative")

    @property
    def has_earlier_turns(self) -> bool:
        """Whether turns were opened in it before its latest one. A turn gets its conversation as
        its opening left it, its own message counted (`MessageStore.open_turn`): without earlier
        turns it has no memory of its own yet (no entities, archive or summary: upkeep follows turns)."""
        return self.message_count > 1

    def is_visible_to(self, owner: OwnerId) -> bool:
        """Only the owner sees a conversation, and nobody sees a deleted one."""
        return self.owner == owner and self.deleted_at is None

    def with_summary(self, summary: str, at: datetime) -> Conversation:
        return replace(self, summary=summary, updated_at=at)

    def renamed(self, title: str, at: datetime) -> Conversation:
        """Titled by hand: auto-titling never changes it again."""
        return replace(self, title=check_title(title), title_by_user=True, updated_at=at)

    @property
    def needs_title(self) -> bool:
        return not self.title and not self.title_by_user


class EntryPoint(enum.StrEnum):
    """Where a turn came in, which decides the config it runs: the draft for the debugger."""

    DEBUGGER = "debugger"
    API = "api"
    MCP = "mcp"
    OPENAI = "openai"  # /v1/chat/completions
    A2A = "a2a"  # /a2a/{agent}: an A2A task


class Rating(enum.StrEnum):
    LIKE = "like"
    DISLIKE = "dislike"


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


class ReviewStage(enum.StrEnum):
    """Which keyword review kept a turn's exchange out of memory: `input` refused the query (the
    preset answered it, no model ran), `output` replaced the model's answer with the preset."""

    INPUT = "input"
    OUTPUT = "output"


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
    # Whose and which agent's: copied from the conversation, so that reads and stats need no join.
    end_user: EndUserId = EndUserId("")  # as its conversation's
    agent_id: AppId = DEFAULT_AGENT
    # A regeneration answers its parent's query again; a newer completed sibling supersedes it.
    parent_message_id: MessageId | None = None
    superseded: bool = False
    rating: Rating | None = None
    rating_note: str = ""
    follow_ups: tuple[str, ...] | None = None  # None: not made (yet)
    first_token_latency: float | None = None  # seconds to the answer's first delta
    # The review that refused the query or replaced the answer: the exchange is kept out of memory.
    blocked_by: ReviewStage | None = None

    def __post_init__(self) -> None:
        if not self.query.strip():
            raise DomainError("a message needs a non-empty query")
        _aware(self.created_at, "created_at")
        _aware(self.updated_at, "updated_at")
        if self.latency < 0:
            raise DomainError("latency cannot be negative")
        if len(self.rating_note) > MAX_NOTE_CHARS:
            raise DomainError(f"a feedback note is at most {MAX_NOTE_CHARS} characters")
        if self.follow_ups is not None and len(self.follow_ups) > MAX_FOLLOW_UPS:
            raise DomainError(f"at most {MAX_FOLLOW_UPS} follow-up questions")

    @property
    def is_history(self) -> bool:
        """A completed turn that no newer answer to the same query replaced, and that no review
        refused or replaced: what the window, the summary and the search read."""
        return self.is_completed_turn and not self.superseded and self.blocked_by is None

    def rated(self, rating: Rating | None, note: str) -> Message:
        """Feedback replaces the earlier one; None clears it (and its note)."""
        problem = text_problem(note)
        if problem:
            raise DomainError(f"the note: {problem}")
        return replace(self, rating=rating, rating_note=note.strip() if rating is not None else "")

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
            first_token_latency=outcome.first_token_latency,
            blocked_by=outcome.blocked_by,
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
    first_token_latency: float | None = None
    blocked_by: ReviewStage | None = None


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
