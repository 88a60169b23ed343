"""A conversation's archive ranked for recall in SQL, on SQLite and PostgreSQL, by the vectors the
upkeep stored with its entries (`memory_items.vector`, written once by `IndexMemory`).

A turn reads the archive's version (the count of its entries and their newest `changed_at`, one
query on `ix_memory_items_conversation`), ranks with the matrix kept in process
(`recall_matrices.ArchiveMatrix`; read again only when the version changed, so another process's
fold, vector or forget is seen at the next turn), and reads the best few entries only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy import func, select

from application.ports.archive_index import ArchiveIndex, ArchiveRanking
from domain.memory_archive import RankedEntry
from domain.user_memory import RecallKind
from infrastructure.persistence.memory_rows import MemoryItemRow, archive_to_domain
from infrastructure.persistence.recall_matrices import ArchiveMatrix, RecallMatrices, normalised

if TYPE_CHECKING:
    from collections.abc import Sequence

    from sqlalchemy.ext.asyncio import AsyncSession

    from domain.ids import ConversationId
    from domain.memory_archive import ArchiveEntry
    from infrastructure.persistence.database import Database

I = MemoryItemRow  # noqa: E741 - the table's one-letter alias, as in SQL
NEWEST_FIRST = (I.created_at.desc(), I.id)


class SqlAlchemyArchiveIndex(ArchiveIndex):
    def __init__(self, database: Database, matrices: RecallMatrices | None = None) -> None:
        self._db = database
        self._matrices = matrices or RecallMatrices()

    async def ranked_archive(
        self, conversation_id: ConversationId, model: str, query: Sequence[float], top_k: int
    ) -> ArchiveRanking:
        wanted = normalised(query)
        where = (I.conversation_id == conversation_id, I.kind == RecallKind.ARCHIVE.value)
        key = ("archive", conversation_id, model, wanted.size)
        async with self._db.transaction("rank the archive") as session:
            version = tuple((await session.execute(select(func.count(), func.max(I.changed_at)).where(*where))).one())
            matrix = self._matrices.get(key, version, ArchiveMatrix)
            if matrix is None:
                rows = (await session.execute(
                    select(I.id, I.text, I.model, I.vector).where(*where).order_by(*NEWEST_FIRST)
                )).all()
                matrix = ArchiveMatrix.of(version, rows, model, wanted.size)
                self._matrices.put(key, matrix)
            best = matrix.best(wanted, top_k) if top_k > 0 else []
            entries = await _entries(session, [item_id for item_id, _ in best] + list(matrix.unembedded))
        ranked = [RankedEntry(entries[item_id], score) for item_id, score in best if item_id in entries]
        unembedded = [entries[item_id] for item_id in matrix.unembedded if item_id in entries]
        return ArchiveRanking(matrix.size, ranked, unembedded)

    async def newest_archive(self, conversation_id: ConversationId, top_k: int) -> ArchiveRanking:
        where = (I.conversation_id == conversation_id, I.kind == RecallKind.ARCHIVE.value, I.text != "")
        async with self._db.transaction("read the newest archive entries") as session:
            count = await session.scalar(select(func.count()).where(*where)) or 0
            rows = await session.scalars(select(I).where(*where).order_by(*NEWEST_FIRST).limit(max(0, top_k)))
            newest = [RankedEntry(archive_to_domain(row), None) for row in rows]
        return ArchiveRanking(count, newest)


async def _entries(session: AsyncSession, ids: Sequence[str]) -> dict[str, ArchiveEntry]:
    if not ids:
        return {}
    rows = await session.scalars(select(I).where(I.id.in_(ids)))
    return {row.id: archive_to_domain(row) for row in rows}
