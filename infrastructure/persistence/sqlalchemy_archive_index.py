"""A conversation's archive ranked for recall in SQL, on SQLite and PostgreSQL, by the vectors the
upkeep stored with its entries (`memory_items.vector`, written once by `IndexMemory`).

A turn ranks with the matrix kept in process (`recall_matrices.ArchiveMatrix`) and reads the best
few entries in one query, beside the archive's version (the count of its entries and their newest
`changed_at`, from `ix_memory_items_conversation` alone). Only a changed version reads the matrix
again (in one query with its version) and ranks again, so another process's fold, vector or forget
is seen at the next turn.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlalchemy import and_, bindparam, func, select

from application.ports.archive_index import ArchiveIndex, ArchiveRanking
from domain.memory.archive import RankedEntry
from domain.memory.user_facts import RecallKind
from infrastructure.persistence.memory_rows import MemoryItemRow, archive_to_domain, versioned, with_version
from infrastructure.persistence.recall_matrices import ArchiveMatrix, RecallMatrices, normalised

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy as np

    from domain.ids import ConversationId
    from domain.memory.archive import ArchiveEntry
    from infrastructure.persistence.database import Database

I = MemoryItemRow  # noqa: E741 - the table's one-letter alias, as in SQL
NEWEST_FIRST = (I.created_at.desc(), I.id)
# What an entry is made of: neither its vector nor its model, which a row stores after these.
ENTRY = (I.id, I.conversation_id, I.text, I.source_message_ids, I.created_at)
# A turn's read when nothing changed, built once (turn_statements.py says why): the archive's
# version, with the entries the kept matrix picked when it picked any (an empty IN in the outer
# join's condition would have SQLite scan the table). Parameters: conversation_id, ids.
_OF_CONVERSATION = (I.conversation_id == bindparam("conversation_id"), I.kind == RecallKind.ARCHIVE.value)
VERSION = with_version(_OF_CONVERSATION)
VERSION_AND_ENTRIES = with_version(_OF_CONVERSATION, ENTRY, I.id.in_(bindparam("ids", expanding=True)))


class SqlAlchemyArchiveIndex(ArchiveIndex):
    def __init__(self, database: Database, matrices: RecallMatrices | None = None) -> None:
        self._db = database
        self._matrices = matrices or RecallMatrices()

    async def ranked_archive(
        self, conversation_id: ConversationId, model: str, query: Sequence[float], top_k: int
    ) -> ArchiveRanking:
        wanted = normalised(query)
        where = [I.conversation_id == conversation_id, I.kind == RecallKind.ARCHIVE.value]
        key = ("archive", conversation_id, model, wanted.size)
        async with self._db.connection("rank the archive") as session:
            kept = self._matrices.latest(key, ArchiveMatrix)
            if kept is not None:
                best = _best(kept, wanted, top_k)
                ids = _wanted(kept, best)
                statement, values = (VERSION_AND_ENTRIES, {"ids": ids}) if ids else (VERSION, {})
                version, rows = versioned((await session.execute(
                    statement, {"conversation_id": conversation_id, **values}
                )).all())
                if version == kept.version:
                    return _ranking(kept, best, rows)
            # Never read, or changed since: the matrix read again with its version, and ranked again.
            version, rows = versioned((await session.execute(
                with_version(where, (I.id, I.text, I.model, I.vector), and_(*where)).order_by(*NEWEST_FIRST)
            )).all())
            matrix = ArchiveMatrix.of(version, rows, model, wanted.size)
            self._matrices.put(key, matrix)
            best = _best(matrix, wanted, top_k)
            ids = _wanted(matrix, best)
            entries = (await session.execute(select(*ENTRY).where(I.id.in_(ids)))).all() if ids else []
        return _ranking(matrix, best, entries)

    async def newest_archive(self, conversation_id: ConversationId, top_k: int) -> ArchiveRanking:
        where = (I.conversation_id == conversation_id, I.kind == RecallKind.ARCHIVE.value, I.text != "")
        async with self._db.transaction("read the newest archive entries") as session:
            count = await session.scalar(select(func.count()).where(*where)) or 0
            rows = await session.scalars(select(I).where(*where).order_by(*NEWEST_FIRST).limit(max(0, top_k)))
            newest = [RankedEntry(archive_to_domain(row), None) for row in rows]
        return ArchiveRanking(count, newest)


def _best(matrix: ArchiveMatrix, wanted: np.ndarray, top_k: int) -> list[tuple[str, float]]:
    return matrix.best(wanted, top_k) if top_k > 0 else []


def _wanted(matrix: ArchiveMatrix, best: Sequence[tuple[str, float]]) -> list[str]:
    """The entries a ranking reads: the best, and those without a vector to be embedded by the caller."""
    return [item_id for item_id, _ in best] + list(matrix.unembedded)


def _ranking(matrix: ArchiveMatrix, best: Sequence[tuple[str, float]], rows: Sequence[Any]) -> ArchiveRanking:
    """What the ranking found, of the entries still there (one forgotten since drops out)."""
    entries: dict[str, ArchiveEntry] = {row.id: archive_to_domain(row) for row in rows}
    ranked = [RankedEntry(entries[item_id], score) for item_id, score in best if item_id in entries]
    unembedded = [entries[item_id] for item_id in matrix.unembedded if item_id in entries]
    return ArchiveRanking(matrix.size, ranked, unembedded)
