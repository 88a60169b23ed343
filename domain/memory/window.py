"""Memory tiers (docs/ARCHITECTURE.md §2): the pure policies; storage is a port.

- short-term: the last `dialog_round` completed turns as user/assistant pairs, within a token
  budget. They are served from the *short-term store*, which holds every completed turn that
  is not archived yet (up to `compact_threshold` turns, plus what arrived since the last fold).
- long-term: the rolling summary (`Conversation.summary`, bounded by `SummaryLimit`) and the
  archive: when the short-term store holds more than `compact_threshold` turns, the oldest
  `compact_batch` are folded into an `ArchiveEntry` that names its source messages.
- entity: `Entity(type, value, confidence, …)`; a new value for a type replaces the old one,
  which is kept as history with the time it stopped being current.

This module holds the short-term window policy, `Exchange` and the tiers' settings
(`MemoryPolicy`); the other tiers live beside it: `domain.memory.summary` (summary bounds,
upkeep state), `domain.memory.archive`, `domain.memory.entities` and `domain.memory.recall`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from domain.conversations.messages import Msg, Role, text_msg
from domain.errors import DomainError, MalformedHistory
from domain.ids import MessageId
from domain.memory.summary import SummaryLimit

if TYPE_CHECKING:
    from datetime import datetime

    from domain.conversations.conversation import Message

TokenCounter = Callable[[str], int]

QUERY_SUFFIX = ":query"
ANSWER_SUFFIX = ":answer"


def turn_pair(message: Message) -> tuple[Msg, Msg]:
    """One completed turn as the user/assistant pair a model sees."""
    if not message.is_completed_turn:
        raise DomainError(f"message {message.id} is not a completed turn")
    user = text_msg(f"{message.id}{QUERY_SUFFIX}", Role.USER, message.query, message.created_at)
    assistant = text_msg(f"{message.id}{ANSWER_SUFFIX}", Role.ASSISTANT, message.answer, message.updated_at)
    return user, assistant


def message_id_of(msg: Msg) -> MessageId:
    """The id of the turn (`Message`) a history Msg comes from: `turn_pair` names them `<id>:query|answer`."""
    base, sep, kind = msg.id.rpartition(":")
    if sep and base and f":{kind}" in (QUERY_SUFFIX, ANSWER_SUFFIX):
        return MessageId(base)
    return MessageId(msg.id)


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


def recent_window(stored: Sequence[Msg], dialog_round: int, max_tokens: int, count: TokenCounter) -> list[Msg]:
    """The prompt's window out of the short-term store: its last `dialog_round` pairs, within the budget."""
    check_history(stored)
    if dialog_round < 0:
        raise DomainError("dialog_round cannot be negative")
    recent = stored[max(0, len(stored) - 2 * dialog_round) :] if dialog_round else []
    return trim_history(recent, max_tokens, count)


def window_turn_ids(window: Sequence[Msg]) -> list[MessageId]:
    """The turns a window (user/assistant pairs) holds, oldest first, one id per pair."""
    check_history(window)
    return [message_id_of(window[index]) for index in range(0, len(window), 2)]


@dataclass(frozen=True, slots=True)
class Exchange:
    """One completed turn as the summariser and the entity extractor read it."""

    message_id: MessageId
    query: str
    answer: str
    at: datetime

    @classmethod
    def of(cls, message: Message) -> Exchange:
        return cls(message.id, message.query, message.answer, message.created_at)


def exchanges_of(window: Sequence[Msg]) -> list[Exchange]:
    """The pairs of a window as exchanges, oldest first."""
    check_history(window)
    return [
        Exchange(message_id_of(user), user.text, assistant.text, user.created_at)
        for user, assistant in zip(window[::2], window[1::2], strict=True)
    ]


@dataclass(frozen=True, slots=True)
class MemoryPolicy:
    """The tiers' settings. `inline_entities`: extract entities before the turn's end event (else after)."""

    compact_threshold: int = 20
    compact_batch: int = 10
    archive_top_k: int = 3
    cross_conversation_top_k: int = 3
    entity_min_confidence: float = 0.7
    summary: SummaryLimit = field(default_factory=SummaryLimit)
    recall_max_tokens: int = 1500
    inline_entities: bool = False

    def __post_init__(self) -> None:
        if self.compact_threshold < 1 or not 1 <= self.compact_batch <= self.compact_threshold:
            raise DomainError("compact_threshold must be >= 1 and compact_batch within 1..compact_threshold")
        if min(self.archive_top_k, self.cross_conversation_top_k, self.recall_max_tokens) < 0:
            raise DomainError("archive_top_k, cross_conversation_top_k and recall_max_tokens cannot be negative")
        if not 0.0 <= self.entity_min_confidence <= 1.0:
            raise DomainError("entity_min_confidence must be within 0..1")

    def rebuild_turns(self, dialog_round: int) -> int:
        """How many recent turns a rebuilt short-term store reads from the record."""
        return max(dialog_round, self.compact_threshold + self.compact_batch)
