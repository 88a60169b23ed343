"""The archive index of a memory store with no vectors of its own: every entry comes back
unembedded, for recall to embed at each turn. Recall uses it when it is given no index (a memory
store alone, as in unit tests); the SQL record's index (`SqlAlchemyArchiveIndex`) embeds none.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.ports.archive_index import ArchiveIndex, ArchiveRanking
from domain.memory.archive import newest_entries

if TYPE_CHECKING:
    from collections.abc import Sequence

    from application.ports.memory_store import MemoryStore
    from domain.ids import ConversationId
    from domain.memory.archive import ArchiveEntry


class StoredArchive(ArchiveIndex):
    def __init__(self, memory: MemoryStore) -> None:
        self._memory = memory

    async def ranked_archive(
        self, conversation_id: ConversationId, model: str, query: Sequence[float], top_k: int
    ) -> ArchiveRanking:
        entries = await self._entries(conversation_id)
        return ArchiveRanking(len(entries), (), entries)

    async def newest_archive(self, conversation_id: ConversationId, top_k: int) -> ArchiveRanking:
        entries = await self._entries(conversation_id)
        return ArchiveRanking(len(entries), newest_entries(entries, top_k))

    async def _entries(self, conversation_id: ConversationId) -> list[ArchiveEntry]:
        return [e for e in await self._memory.archive(conversation_id) if e.summary.strip()]
