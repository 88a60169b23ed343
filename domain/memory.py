"""Memory tiers: the short-term window policy, archive entries and entities."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from domain.conversation import Message
from domain.errors import DomainError, MalformedHistory
from domain.ids import ConversationId, MessageId
from domain.messages import Msg, Role, text_msg

TokenCounter = Callable[[str], int]


def completed_turns(messages: Sequence[Message], dialog_round: int) -> list[Message]:
    """The last `dialog_round` turns that finished normally with an answer, oldest first."""
    if dialog_round < 0:
        raise DomainError("dialog_round cannot be negative")
    done = [m for m in messages if m.is_completed_turn]
    return done[-dialog_round:] if dialog_round else []


def turn_pair(message: Message) -> tuple[Msg, Msg]:
    """One completed turn as the user/assistant pair a model sees."""
    if not message.is_completed_turn:
        raise DomainError(f"message {message.id} is not a completed turn")
    user = text_msg(f"{message.id}:query", Role.USER, message.query, message.created_at)
    assistant = text_msg(f"{message.id}:answer", Role.ASSISTANT, message.answer, message.updated_at)
    return user, assistant


def history_from_turns(turns: Sequence[Message]) -> list[Msg]:
    return [msg for turn in turns for msg in turn_pair(turn)]


def check_history(history: Sequence[Msg]) -> None:
    """History must be user/assistant pairs, oldest first: anything else is an error."""
    if len(history) % 2:
        raise MalformedHistory(f"history has an odd number of messages ({len(history)})")
    for index, msg in enumerate(history):
        expected = Role.USER if index % 2 == 0 else Role.ASSISTANT
        if msg.role is not expected:
            raise MalformedHistory(
                f"history message {index} is {msg.role.value}, expected {expected.value}"
            )


def trim_history(history: Sequence[Msg], max_tokens: int, count: TokenCounter) -> list[Msg]:
    """Drop whole pairs from the oldest end until the history fits `max_tokens`."""
    check_history(history)
    if max_tokens < 0:
        raise DomainError("the token budget cannot be negative")
    sizes = [count(m.text) for m in history]
    start, total = 0, sum(sizes)
    while total > max_tokens and start < len(history):
        total -= sizes[start] + sizes[start + 1]
        start += 2
    return list(history[start:])


def short_term_window(
    messages: Sequence[Message], dialog_round: int, max_tokens: int, count: TokenCounter
) -> list[Msg]:
    """The short-term tier: recent completed turns as pairs, within the token budget."""
    return trim_history(history_from_turns(completed_turns(messages, dialog_round)), max_tokens, count)


@dataclass(frozen=True, slots=True)
class ArchiveEntry:
    """A summary of an old batch of messages, with the ids it came from."""

    id: str
    conversation_id: ConversationId
    summary: str
    source_message_ids: tuple[MessageId, ...]
    created_at: datetime

    def __post_init__(self) -> None:
        if not self.source_message_ids:
            raise DomainError("an archive entry must name its source messages")


@dataclass(frozen=True, slots=True)
class Entity:
    """Something the user told us, e.g. type='date', value='tomorrow'."""

    type: str
    value: str
    confidence: float
    source_message_id: MessageId
    updated_at: datetime
    superseded_at: datetime | None = None

    def __post_init__(self) -> None:
        if not self.type.strip() or not self.value.strip():
            raise DomainError("an entity needs a type and a value")
        if not 0.0 <= self.confidence <= 1.0:
            raise DomainError(f"confidence must be within 0..1, got {self.confidence}")

    def reaches_prompt(self, min_confidence: float) -> bool:
        return self.superseded_at is None and self.confidence >= min_confidence

    def superseded(self, at: datetime) -> Entity:
        return replace(self, superseded_at=at)
