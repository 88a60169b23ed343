"""The archive tier: folding old turns of the short-term store into summaries, and ranking them.

"Messages" in the archive policy are `Message` records — one turn, a query and its answer —
which is also what an archive entry's `source_message_ids` name.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from domain.errors import DomainError
from domain.knowledge.datasets import cosine
from domain.memory.window import check_history

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from datetime import datetime

    from domain.conversations.conversation import Message
    from domain.conversations.messages import Msg
    from domain.ids import ConversationId, MessageId


def due_for_archive(window: Sequence[Msg], threshold: int, batch: int) -> list[Msg]:
    """The oldest `batch` turns of the short-term store once it holds more than `threshold` turns, else []."""
    check_history(window)
    if threshold < 1 or not 1 <= batch <= threshold:
        raise DomainError("the archive threshold must be >= 1 and the batch within 1..threshold")
    if len(window) // 2 <= threshold:
        return []
    return list(window[: 2 * batch])


def unarchived(turns: Sequence[Message], archive: Iterable[ArchiveEntry]) -> list[Message]:
    """The turns no archive entry names: what a rebuilt short-term store holds."""
    folded = {source for entry in archive for source in entry.source_message_ids}
    return [turn for turn in turns if turn.id not in folded]


@dataclass(frozen=True, slots=True)
class ArchiveEntry:
    """A summary of an old batch of turns, with the ids of their messages. The summary may be empty
    (the batch held nothing worth keeping): the batch is archived all the same, and never recalled."""

    id: str
    conversation_id: ConversationId
    summary: str
    source_message_ids: tuple[MessageId, ...]
    created_at: datetime

    def __post_init__(self) -> None:
        if not self.source_message_ids:
            raise DomainError("an archive entry must name its source messages")
        if len(set(self.source_message_ids)) != len(self.source_message_ids):
            raise DomainError("an archive entry names each source message once")

    @staticmethod
    def id_for(conversation_id: ConversationId, sources: Sequence[MessageId]) -> str:
        """The same batch always gets the same id, so folding it twice is detectable."""
        digest = hashlib.sha256("\n".join([conversation_id, *sources]).encode("utf-8")).hexdigest()
        return f"arc_{digest[:24]}"


@dataclass(frozen=True, slots=True)
class RankedEntry:
    """An archive entry and its similarity to the query (None when nothing could be compared)."""

    entry: ArchiveEntry
    score: float | None


def rank_archive(
    entries: Sequence[ArchiveEntry],
    vectors: Sequence[Sequence[float]],
    query: Sequence[float],
    top_k: int,
) -> list[RankedEntry]:
    """The `top_k` entries most similar to the query (cosine), best first; ties go to the newer."""
    if len(entries) != len(vectors):
        raise DomainError("one vector per archive entry")
    scored = [RankedEntry(e, cosine(query, v)) for e, v in zip(entries, vectors, strict=True)]
    scored.sort(key=lambda r: (-(r.score or 0.0), -r.entry.created_at.timestamp()))
    return scored[: max(0, top_k)]


def newest_entries(entries: Sequence[ArchiveEntry], top_k: int) -> list[RankedEntry]:
    """The fallback when similarity cannot be computed: the newest entries, unscored."""
    newest = sorted(entries, key=lambda e: e.created_at, reverse=True)[: max(0, top_k)]
    return [RankedEntry(e, None) for e in newest]
