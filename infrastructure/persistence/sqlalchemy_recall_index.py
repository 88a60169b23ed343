"""The recall index in SQL: archive entries and summaries of a user's conversations, with their
vectors, ranked by cosine similarity (numpy).

Recall (`for_recall`) ranks the user's shared items but those of the turn's own conversation with
the matrix kept in process for that user (`recall_matrices.py`: one per user, holding all of the
user's shared items, the turn's own left out as it ranks), and reads text and sources of the best few
only, joined to their conversations so that a deleted one is left out, in one query with the version
of those items (from `ix_memory_items_recall` alone), their scope and model checked again. A changed
version reads only the items written since the kept one (`changed_at`, from the same index, from
LATE_COMMIT_S before it) with their text, and puts them in the matrix, so a user's next conversation,
whose predecessor's upkeep added its summary, costs what that summary costs, not a read of all the
user's vectors; an item that left meanwhile (its count says so) reads the matrix whole, and so does a
matrix read whole longer than WHOLE_READ_AFTER_S ago. A search of the memory API (`for_recall=False`)
reads all of the user's items with that join and ranks them once. tests/bench/user_memory.py
measures both; tests/bench/recall_growth.py a new conversation's recall as the user's items grow.

An upkeep's index (`index_conversation`) keeps the summary, shares the conversation's items and
reads those to embed in one transaction, not three: a new conversation's upkeep commits less. A
summary embedded beforehand is kept with its vector, so no transaction saves it after. Its
statements are prebuilt (recall_index_statements.py) and run on a Core connection: no unit of work.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import numpy as np
from sqlalchemy import and_, func, select, update

from application.ports.memory_record import RecallIndex
from domain.conversations.conversation import MessageStatus
from domain.memory.user_facts import FactHolder, RecallItem, RecallKind, RecallScope, ScoredItem
from infrastructure.persistence.memory_rows import (
    MemoryItemRow,
    item_to_domain,
    summary_item_id,
    versioned,
)
from infrastructure.persistence.recall_index_statements import (
    DROP_ITEM,
    SAVE_VECTOR,
    SHARE,
    SUMMARY_TEXT,
    UNEMBEDDED,
    best_items,
    changed_items,
    keep_summary,
    user_matrix,
)
from infrastructure.persistence.recall_matrices import Matrix, RecallMatrices, normalised
from infrastructure.persistence.rows import ConversationRow, MessageRow, message_to_domain, utc
from infrastructure.persistence.turn_statements import BLANK

if TYPE_CHECKING:
    from collections.abc import Hashable, Mapping, Sequence

    from sqlalchemy.ext.asyncio import AsyncConnection

    from domain.conversations.conversation import Conversation, Message
    from domain.ids import AppId, ConversationId, MessageId, OwnerId
    from infrastructure.persistence.database import Database

I = MemoryItemRow  # noqa: E741 - the table's one-letter alias, as in SQL
VECTOR = np.dtype("<f4")
# A write stamps `changed_at` before it commits (on SQLite it may wait up to its 5 s busy timeout for
# the lock): what changed is read from this long before the kept version's newest, so that a write
# that committed late is still read. And a kept matrix is read whole at least this often, so that one
# committed later still, or stamped by a clock running behind, is in it within that time.
LATE_COMMIT_S = 10.0
WHOLE_READ_AFTER_S = 300.0


@dataclass(frozen=True, slots=True)
class _Ranking:
    """A turn's query (normalised), the conversation it leaves out, and how many items it wants."""

    wanted: np.ndarray
    exclude: str | None
    top_k: int

    def best(self, matrix: Matrix) -> list[tuple[str, str, float]]:
        # A few more than asked: a conversation deleted since (its items not erased yet) drops out below.
        return matrix.best(self.wanted, self.exclude, self.top_k * 2 + 2)


def vector_bytes(vector: Sequence[float]) -> bytes:
    return np.asarray(vector, dtype=VECTOR).tobytes()


class SqlAlchemyRecallIndex(RecallIndex):
    def __init__(self, database: Database, matrices: RecallMatrices | None = None) -> None:
        self._db = database
        self._matrices = matrices or RecallMatrices()

    async def index_summary(self, conversation: Conversation, sources: Sequence[MessageId]) -> None:
        async with self._db.connection("index a summary") as session:
            await self._keep_summary(session, conversation, sources)

    async def share(self, conversation_id: ConversationId, scope: RecallScope) -> None:
        async with self._db.connection("share a conversation's items") as session:
            await _share(session, conversation_id, scope)

    async def index_conversation(
        self, conversation: Conversation, sources: Sequence[MessageId], scope: RecallScope, model: str,
        summary_vector: Sequence[float] | None = None,
    ) -> list[RecallItem]:
        vector = None if summary_vector is None else (model, vector_bytes(summary_vector))
        async with self._db.connection("index a conversation") as session:
            await self._keep_summary(session, conversation, sources, vector)
            await _share(session, conversation.id, scope)
            return await _unembedded(session, conversation.id, model)

    async def _keep_summary(
        self, session: AsyncConnection, conversation: Conversation, sources: Sequence[MessageId],
        vector: tuple[str, bytes] | None = None,
    ) -> None:
        """Keep the summary item; a changed one with `vector` (its model, its bytes) when given."""
        item_id = summary_item_id(conversation.id)
        if not conversation.summary.strip():
            await session.execute(DROP_ITEM, {"b_id": item_id})
            return
        if await session.scalar(SUMMARY_TEXT, {"b_id": item_id}) == conversation.summary:
            return
        model, embedded = vector or (None, None)
        values = {
            "id": item_id, "conversation_id": conversation.id, "owner": conversation.owner,
            "end_user": conversation.end_user, "agent_id": conversation.app_id, "kind": RecallKind.SUMMARY.value,
            "text": conversation.summary, "source_message_ids": json.dumps(list(sources)),
            "created_at": utc(conversation.updated_at), "model": model, "vector": embedded, "changed_at": _now(),
        }
        await session.execute(keep_summary(self._db.is_sqlite), {f"b_{k}": v for k, v in values.items()})

    async def share_agent(self, owner: OwnerId, agent_id: AppId, scope: RecallScope) -> None:
        c = ConversationRow
        published = select(c.id).where(c.owner == owner, c.app_id == agent_id, c.is_debug.is_(False))
        async with self._db.transaction("share an agent's items") as session:
            await session.execute(
                update(I).where(I.owner == owner, I.agent_id == agent_id, I.recall_scope != scope.value,
                                I.conversation_id.in_(published))
                .values(recall_scope=scope.value, changed_at=_now())
            )

    async def unembedded(self, conversation_id: ConversationId, model: str) -> list[RecallItem]:
        async with self._db.connection("read items to embed") as session:
            return await _unembedded(session, conversation_id, model)

    async def save_vectors(self, model: str, vectors: Mapping[str, Sequence[float]]) -> None:
        if not vectors:
            return
        async with self._db.connection("save item vectors") as session:
            for item_id, vector in vectors.items():
                values = {"b_id": item_id, "b_model": model, "b_vector": vector_bytes(vector), "b_changed_at": _now()}
                await session.execute(SAVE_VECTOR, values)

    async def similar(
        self,
        holder: FactHolder,
        model: str,
        query: Sequence[float],
        top_k: int,
        exclude: ConversationId | None = None,
        *,
        for_recall: bool = True,
    ) -> list[ScoredItem]:
        if top_k < 1:
            return []
        if for_recall:
            return await self._recalled(holder, model, query, top_k, exclude)
        c = ConversationRow
        where = [I.owner == holder.owner, I.end_user == holder.end_user, I.model == model, I.vector.is_not(None)]
        if holder.agent_id is not None:
            where.append(I.agent_id == holder.agent_id)
        if exclude is not None:
            where.append(I.conversation_id != exclude)
        live = and_(c.id == I.conversation_id, c.deleted_at.is_(None), c.is_debug.is_(False))
        statement = select(I.id, I.kind, I.conversation_id, I.text, I.source_message_ids, I.vector).join(c, live)
        async with self._db.transaction("recall across conversations") as session:
            rows = (await session.execute(statement.where(*where))).all()
        return _ranked(rows, query, top_k)

    async def _recalled(
        self, holder: FactHolder, model: str, query: Sequence[float], top_k: int, exclude: ConversationId | None
    ) -> list[ScoredItem]:
        wanted = normalised(query)
        shared = RecallScope.ACCOUNT if holder.agent_id is None else RecallScope.AGENT
        of_agent = holder.agent_id is not None
        values = {"owner": holder.owner, "end_user": holder.end_user, "scope": shared.value, "model": model,
                  "agent_id": holder.agent_id}
        key = (holder, shared, model, wanted.size)
        ranking = _Ranking(wanted, exclude, top_k)
        async with self._db.connection("recall across conversations") as session:
            kept = self._matrices.latest(key, Matrix)
            if kept is not None and time.monotonic() - kept.read_at < WHOLE_READ_AFTER_S:
                recalled = await self._from_kept(session, key, kept, values, ranking)
                if recalled is not None:
                    return recalled
            # Never read, read long ago, or an item left meanwhile: read whole, ranked again.
            version, found = versioned((await session.execute(user_matrix(of_agent), values)).all())
            matrix = Matrix.of(version, found, wanted.size, time.monotonic())
            self._matrices.put(key, matrix)
            best = ranking.best(matrix)
            rows = await _texts(session, values, best) if best else []
        return _scored(best, rows, top_k, values)

    async def _from_kept(
        self, session: AsyncConnection, key: Hashable, kept: Matrix, values: dict[str, Any], ranking: _Ranking
    ) -> list[ScoredItem] | None:
        """Ranked with the kept matrix: its version unchanged, or what was written since put in place,
        read with its text; None when the matrix cannot be brought up to date."""
        of_agent = values["agent_id"] is not None
        best = ranking.best(kept)
        version, rows = versioned((await session.execute(
            best_items(of_agent, picked=bool(best)), {**values, "ids": _ids(best)}
        )).all())
        if version == kept.version:
            return _scored(best, rows, ranking.top_k, values)
        if kept.version[1] is None:  # it held nothing: read whole
            return None
        since = kept.version[1] - timedelta(seconds=LATE_COMMIT_S)
        version, changed = versioned((await session.execute(changed_items(of_agent), {**values, "since": since})).all())
        matrix = kept.updated(version, changed, ranking.wanted.size)
        if matrix is None:
            return None
        self._matrices.put(key, matrix)
        best = ranking.best(matrix)
        texts = {row.id: row for row in (*rows, *changed)}
        if any(item_id not in texts for item_id in _ids(best)):  # an item neither read had
            texts = {row.id: row for row in await _texts(session, values, best)}
        return _scored(best, list(texts.values()), ranking.top_k, values)

    async def recent_turns(self, holder: FactHolder, limit: int) -> list[Message]:
        c, m = ConversationRow, MessageRow
        # History as the domain's `Message.is_history` says: ended normally with a non-blank answer,
        # neither superseded by a regeneration nor blocked by a review.
        where = [c.owner == holder.owner, c.end_user == holder.end_user, c.deleted_at.is_(None),
                 c.is_debug.is_(False), m.status == MessageStatus.NORMAL.value, func.trim(m.answer, BLANK) != "",
                 m.superseded.is_(False), m.blocked_by.is_(None)]
        if holder.agent_id is not None:
            where.append(m.app_id == holder.agent_id)
        newest_first = (m.created_at.desc(), m.seq.desc())  # seq: equal times in insertion order
        statement = select(m).join(c, c.id == m.conversation_id).where(*where).order_by(*newest_first).limit(limit)
        async with self._db.transaction("read a user's recent turns") as session:
            return [message_to_domain(row) for row in await session.scalars(statement)]


async def _share(session: AsyncConnection, conversation_id: ConversationId, scope: RecallScope) -> None:
    values = {"b_conversation_id": conversation_id, "b_scope": scope.value, "b_recall_scope": scope.value,
              "b_changed_at": _now()}
    await session.execute(SHARE, values)


async def _unembedded(session: AsyncConnection, conversation_id: ConversationId, model: str) -> list[RecallItem]:
    rows = await session.execute(UNEMBEDDED, {"b_conversation_id": conversation_id, "b_model": model})
    return [item_to_domain(row) for row in rows]


async def _texts(
    session: AsyncConnection, values: Mapping[str, Any], best: Sequence[tuple[str, str, float]]
) -> list[Any]:
    """The text and sources of the `best` items, of live conversations."""
    statement = best_items(values["agent_id"] is not None, picked=True)
    return versioned((await session.execute(statement, {**values, "ids": _ids(best)})).all())[1]


def _ids(best: Sequence[tuple[str, str, float]]) -> list[str]:
    return [item_id for item_id, _, _ in best]


def _scored(best: Sequence[tuple[str, str, float]], rows: Sequence[Any], top_k: int,
            values: Mapping[str, Any]) -> list[ScoredItem]:
    """The best items that were read, and that the holder's recall still reaches, best first."""
    found = {row.id: row for row in rows if row.recall_scope == values["scope"] and row.model == values["model"]}
    return [ScoredItem(_item(found[item_id]), score) for item_id, _, score in best if item_id in found][:top_k]


def _ranked(rows: Sequence[Any], query: Sequence[float], top_k: int) -> list[ScoredItem]:
    wanted = np.asarray(query, dtype=VECTOR)
    rows = [r for r in rows if len(r.vector) == wanted.nbytes]  # another dimension: another model's
    if not rows or not wanted.any():
        return []
    matrix = np.frombuffer(b"".join(r.vector for r in rows), dtype=VECTOR).reshape(len(rows), wanted.size)
    norms = np.linalg.norm(matrix, axis=1) * float(np.linalg.norm(wanted))
    scores = (matrix @ wanted) / np.where(norms == 0, 1.0, norms)
    best = np.argsort(-scores, kind="stable")[:top_k]
    return [ScoredItem(_item(rows[i]), float(scores[i])) for i in best if scores[i] > 0.0]


def _item(row: Any) -> RecallItem:
    return RecallItem(row.id, RecallKind(row.kind), row.conversation_id, row.text,
                      tuple(json.loads(row.source_message_ids)))


def _now() -> datetime:
    return datetime.now(UTC)
