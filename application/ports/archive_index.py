"""A conversation's archive ranked for recall (docs/ARCHITECTURE.md §3 step 3) by the vectors its
entries were given when they were written, so that a turn embeds its query and nothing else.

Entries with no vector of the recall's embedder yet (folded, not indexed yet; or another embedder's)
come back unranked, for the caller to score. Every method raises `StoreUnavailable` (or another
`ApplicationError`) when its store fails.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from domain.ids import ConversationId
from domain.memory.archive import ArchiveEntry, RankedEntry


@dataclass(frozen=True, slots=True)
class ArchiveRanking:
    entries: int = 0  # the conversation's archive entries that have text
    ranked: Sequence[RankedEntry] = ()  # best first
    unembedded: Sequence[ArchiveEntry] = field(default_factory=tuple)


class ArchiveIndex(Protocol):
    async def ranked_archive(
        self, conversation_id: ConversationId, model: str, query: Sequence[float], top_k: int
    ) -> ArchiveRanking:
        """The `top_k` entries with a vector of `model` most similar to `query` by cosine, best
        first (ties to the newer, whatever their score), and those with no such vector."""
        ...

    async def newest_archive(self, conversation_id: ConversationId, top_k: int) -> ArchiveRanking:
        """The `top_k` newest entries, unscored: recall's fallback when nothing can be compared."""
        ...
