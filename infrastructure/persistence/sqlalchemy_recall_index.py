"""The recall index in SQL: archive entries and summaries of a user's conversations, with their
vectors, ranked by cosine similarity (numpy over the float32 vectors of one query's rows).

A user's items are read with one indexed query (`ix_memory_items_user`) joined to their
conversations (to leave out deleted and debugger ones); the ranking is one matrix product, so a
user with a thousand conversations is ranked in about a millisecond (tests/bench/user_memory.py).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import numpy as np
from sqlalchemy import and_, delete, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from application.ports.memory_record import RecallIndex
from domain.conversation import MessageStatus
from domain.user_memory import FactHolder, RecallItem, RecallKind, ScoredItem
from infrastructure.persistence.memory_rows import MemoryItemRow, item_to_domain, summary_item_id
from infrastructure.persistence.rows import ConversationRow, MessageRow, message_to_domain, utc

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from domain.conversation import Conversation, Message
    from domain.ids import ConversationId, MessageId
    from infrastructure.persistence.database import Database

I = MemoryItemRow  # noqa: E741 - the table's one-letter alias, as in SQL
VECTOR = np.dtype("<f4")


def vector_bytes(vector: Sequence[float]) -> bytes:
    return np.asarray(vector, dtype=VECTOR).tobytes()


class SqlAlchemyRecallIndex(RecallIndex):
    def __init__(self, database: Database) -> None:
        self._db = database

    async def index_summary(self, conversation: Conversation, sources: Sequence[MessageId]) -> None:
        item_id = summary_item_id(conversation.id)
        async with self._db.transaction("index a summary") as session:
            if not conversation.summary.strip():
                await session.execute(delete(I).where(I.id == item_id))
                return
            current = await session.scalar(select(I.text).where(I.id == item_id))
            if current == conversation.summary:
                return
            values = {
                "id": item_id, "conversation_id": conversation.id, "owner": conversation.owner,
                "end_user": conversation.end_user, "agent_id": conversation.app_id, "kind": RecallKind.SUMMARY.value,
                "text": conversation.summary, "source_message_ids": json.dumps(list(sources)),
                "created_at": utc(conversation.updated_at), "model": None, "vector": None,
            }
            dialect_insert = sqlite_insert if self._db.is_sqlite else pg_insert
            upsert = dialect_insert(I).values(values)
            changed = {k: upsert.excluded[k] for k in ("text", "source_message_ids", "created_at", "model", "vector")}
            await session.execute(upsert.on_conflict_do_update(index_elements=["id"], set_=changed))

    async def unembedded(self, conversation_id: ConversationId, model: str) -> list[RecallItem]:
        missing = (I.model.is_(None)) | (I.model != model)
        async with self._db.transaction("read items to embed") as session:
            rows = await session.scalars(select(I).where(I.conversation_id == conversation_id, missing, I.text != ""))
            return [item_to_domain(row) for row in rows]

    async def save_vectors(self, model: str, vectors: Mapping[str, Sequence[float]]) -> None:
        if not vectors:
            return
        async with self._db.transaction("save item vectors") as session:
            for item_id, vector in vectors.items():
                await session.execute(update(I).where(I.id == item_id).values(model=model, vector=vector_bytes(vector)))

    async def similar(
        self,
        holder: FactHolder,
        model: str,
        query: Sequence[float],
        top_k: int,
        exclude: ConversationId | None = None,
    ) -> list[ScoredItem]:
        if top_k < 1:
            return []
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


    async def recent_turns(self, holder: FactHolder, limit: int) -> list[Message]:
        c, m = ConversationRow, MessageRow
        where = [c.owner == holder.owner, c.end_user == holder.end_user, c.deleted_at.is_(None),
                 c.is_debug.is_(False), m.status == MessageStatus.NORMAL.value, m.answer != "",
                 m.superseded.is_(False)]
        if holder.agent_id is not None:
            where.append(m.app_id == holder.agent_id)
        statement = (
            select(m).join(c, c.id == m.conversation_id).where(*where).order_by(m.created_at.desc()).limit(limit)
        )
        async with self._db.transaction("read a user's recent turns") as session:
            return [message_to_domain(row) for row in await session.scalars(statement)]


def _ranked(rows: Sequence[Any], query: Sequence[float], top_k: int) -> list[ScoredItem]:
    wanted = np.asarray(query, dtype=VECTOR)
    rows = [r for r in rows if len(r.vector) == wanted.nbytes]  # another dimension: another model's
    if not rows or not wanted.any():
        return []
    matrix = np.frombuffer(b"".join(r.vector for r in rows), dtype=VECTOR).reshape(len(rows), wanted.size)
    norms = np.linalg.norm(matrix, axis=1) * float(np.linalg.norm(wanted))
    scores = (matrix @ wanted) / np.where(norms == 0, 1.0, norms)
    best = np.argsort(-scores, kind="stable")[:top_k]
    return [
        ScoredItem(RecallItem(rows[i].id, RecallKind(rows[i].kind), rows[i].conversation_id, rows[i].text,
                              tuple(json.loads(rows[i].source_message_ids))), float(scores[i]))
        for i in best if scores[i] > 0.0
    ]
