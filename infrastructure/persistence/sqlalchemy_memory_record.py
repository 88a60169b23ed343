"""The memory record in SQL, on SQLite and PostgreSQL (docs/ARCHITECTURE.md §5): archive entries,
a conversation's entities and an end user's facts with their whole history, and forgetting.

Entities are merged by `domain.memory.entities.merge_entities` inside one transaction that first
takes the holder's lock (an advisory transaction lock on PostgreSQL; SQLite's write lock, taken by
a write before the read), so that two upkeeps merging at once never both add a current value.
Removing a type and forgetting a conversation take the same lock, so they never fall between a
merge's read and its writes; forgetting a user takes none, and a merge then writes by row id,
finding gone what the forget removed.

The reads of a sheet, which a turn (the user's facts) and an upkeep (the conversation's entities)
make, are built once with bound parameters (turn_statements.py says why) and run on a Core
connection: they need no unit of work.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from sqlalchemy import bindparam, delete, func, insert, literal, select, text, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from application.ports.memory_record import ArchiveRecord, MemoryForgetting, UserFacts
from application.ports.memory_store import EntityMemory
from domain.ids import ConversationId
from domain.memory.entities import Entity, EntitySheet, merge_entities
from domain.memory.user_facts import FactHolder, ForgetCounts, RecallKind
from infrastructure.persistence.memory_rows import (
    SHARED,
    MemoryEntityRow,
    MemoryItemRow,
    archive_to_domain,
    entity_to_domain,
    entity_values,
)
from infrastructure.persistence.rows import ConversationRow, utc

if TYPE_CHECKING:
    from collections.abc import Sequence

    from sqlalchemy import ColumnElement, Select
    from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

    from domain.ids import AppId, EndUserId, OwnerId
    from domain.memory.archive import ArchiveEntry
    from infrastructure.persistence.database import Database

E = MemoryEntityRow
ITEM_COLUMNS = ["id", "conversation_id", "owner", "end_user", "agent_id", "kind", "text", "source_message_ids",
                "created_at"]


# Parameters: conversation_id; owner, end_user, agent_id (SHARED for the account's facts).
_OLDEST_FIRST = (E.superseded_at, E.id)
CONVERSATION_SHEET = select(E).where(E.conversation_id == bindparam("conversation_id")).order_by(*_OLDEST_FIRST)
USER_SHEET = select(E).where(
    E.owner == bindparam("owner"), E.end_user == bindparam("end_user"), E.conversation_id == SHARED,
    E.agent_id == bindparam("agent_id"),
).order_by(*_OLDEST_FIRST)


def _user_where(holder: FactHolder) -> list[ColumnElement[bool]]:
    return [E.owner == holder.owner, E.end_user == holder.end_user, E.conversation_id == SHARED,
            E.agent_id == (holder.agent_id or SHARED)]


def _conversation_key(conversation_id: ConversationId) -> str:
    return f"conversation:{conversation_id}"


def _user_key(holder: FactHolder) -> str:
    return f"user:{holder.owner}:{holder.agent_id or ''}:{holder.end_user}"


class SqlAlchemyMemoryRecord(ArchiveRecord, EntityMemory, UserFacts, MemoryForgetting):
    def __init__(self, database: Database) -> None:
        self._db = database

    # --- archive ---

    async def archive_entries(self, conversation_id: ConversationId) -> list[ArchiveEntry]:
        async with self._db.transaction("read the archive") as session:
            rows = await session.scalars(
                select(MemoryItemRow)
                .where(MemoryItemRow.conversation_id == conversation_id, MemoryItemRow.kind == RecallKind.ARCHIVE)
                .order_by(MemoryItemRow.created_at, MemoryItemRow.id)
            )
            return [archive_to_domain(row) for row in rows]

    async def add_archive_entries(self, entries: Sequence[ArchiveEntry]) -> None:
        if not entries:
            return
        async with self._db.transaction("keep archive entries") as session:
            for entry in entries:
                await session.execute(self._insert_item_if_new(entry))

    def _insert_item_if_new(self, entry: ArchiveEntry) -> Any:
        c = ConversationRow

        def of_conversation(column: Any) -> Any:  # "" when the conversation is not there (any more)
            return func.coalesce(select(column).where(c.id == entry.conversation_id).scalar_subquery(), "")

        values = select(
            literal(entry.id), literal(entry.conversation_id),
            of_conversation(c.owner), of_conversation(c.end_user), of_conversation(c.app_id),
            literal(RecallKind.ARCHIVE.value), literal(entry.summary),
            literal(json.dumps(list(entry.source_message_ids))),
            literal(utc(entry.created_at), MemoryItemRow.created_at.type),
        )
        dialect_insert = sqlite_insert if self._db.is_sqlite else pg_insert
        return dialect_insert(MemoryItemRow).from_select(ITEM_COLUMNS, values).on_conflict_do_nothing(
            index_elements=["id"]
        )

    # --- a conversation's entities ---

    async def entity_sheet(self, conversation_id: ConversationId) -> EntitySheet:
        async with self._db.connection("read entities") as session:
            return await _sheet(session, CONVERSATION_SHEET, {"conversation_id": conversation_id})

    async def record_entities(
        self, conversation_id: ConversationId, entities: Sequence[Entity], min_confidence: float = 0.0
    ) -> None:
        if not entities:
            return
        async with self._db.transaction("record entities") as session:
            await self._lock(session, _conversation_key(conversation_id))
            c = ConversationRow
            found = (await session.execute(
                select(c.owner, c.end_user).where(c.id == conversation_id)
            )).first()
            holder = {"owner": found.owner if found else "", "end_user": found.end_user if found else "",
                      "conversation_id": conversation_id, "agent_id": SHARED}
            await _merge(session, [E.conversation_id == conversation_id], holder, entities, min_confidence)

    async def remove_entity(self, conversation_id: ConversationId, kind: str) -> bool:
        async with self._db.transaction("remove an entity") as session:
            await self._lock(session, _conversation_key(conversation_id))  # not between a merge's read and write
            return await _remove(session, [E.conversation_id == conversation_id], kind)

    # --- an end user's facts ---

    async def user_facts(self, holder: FactHolder) -> EntitySheet:
        holder_values = {"owner": holder.owner, "end_user": holder.end_user, "agent_id": holder.agent_id or SHARED}
        async with self._db.connection("read user facts") as session:
            return await _sheet(session, USER_SHEET, holder_values)

    async def record_user_facts(
        self, holder: FactHolder, entities: Sequence[Entity], min_confidence: float = 0.0
    ) -> None:
        if not entities:
            return
        async with self._db.transaction("record user facts") as session:
            await self._lock(session, _user_key(holder))
            values = {"owner": holder.owner, "end_user": holder.end_user, "conversation_id": SHARED,
                      "agent_id": holder.agent_id or SHARED}
            await _merge(session, _user_where(holder), values, entities, min_confidence)

    async def remove_user_fact(self, holder: FactHolder, kind: str) -> bool:
        async with self._db.transaction("remove a user fact") as session:
            await self._lock(session, _user_key(holder))
            return await _remove(session, _user_where(holder), kind)

    # --- forgetting ---

    async def forget_conversation(self, conversation_id: ConversationId) -> None:
        async with self._db.transaction("forget a conversation's memory") as session:
            await self._lock(session, _conversation_key(conversation_id))  # after a merge under way, not amid it
            await session.execute(delete(E).where(E.conversation_id == conversation_id))
            await session.execute(delete(MemoryItemRow).where(MemoryItemRow.conversation_id == conversation_id))

    async def forget_user(self, owner: OwnerId, end_user: EndUserId) -> ForgetCounts:
        i, c = MemoryItemRow, ConversationRow
        async with self._db.transaction("forget a user's memory") as session:
            mine = [E.owner == owner, E.end_user == end_user]
            facts = await _deleted(session, delete(E).where(*mine, E.conversation_id == SHARED))
            entities = await _deleted(session, delete(E).where(*mine, E.conversation_id != SHARED))
            items = [i.owner == owner, i.end_user == end_user]
            archive = await _deleted(session, delete(i).where(*items, i.kind == RecallKind.ARCHIVE))
            await session.execute(delete(i).where(*items))
            # The summary itself is on its conversation's row: it is memory, and goes with the rest.
            summaries = await _deleted(session, update(c).where(
                c.owner == owner, c.end_user == end_user, c.summary != ""
            ).values(summary=""))
            return ForgetCounts(facts=facts, conversation_entities=entities, archive_entries=archive,
                                summaries=summaries)

    async def conversations_with_memory(
        self, owner: OwnerId, end_user: EndUserId, agent_id: AppId | None = None
    ) -> list[ConversationId]:
        c = ConversationRow
        with_entities = select(E.conversation_id).where(E.owner == owner, E.end_user == end_user,
                                                        E.conversation_id != SHARED)
        with_items = select(MemoryItemRow.conversation_id).where(
            MemoryItemRow.owner == owner, MemoryItemRow.end_user == end_user
        )
        where = [c.owner == owner, c.end_user == end_user, c.deleted_at.is_(None), c.is_debug.is_(False),
                 (c.summary != "") | c.id.in_(with_entities) | c.id.in_(with_items)]
        if agent_id is not None:
            where.append(c.app_id == agent_id)
        statement = select(c.id).where(*where).order_by(c.last_active_at.desc(), c.id)
        async with self._db.transaction("list conversations with memory") as session:
            return [ConversationId(row) for row in await session.scalars(statement)]

    async def _lock(self, session: AsyncSession, key: str) -> None:
        if self._db.is_sqlite:  # a write first: SQLite then holds its one write lock until commit
            await session.execute(update(E).where(literal(False)).values(id=E.id))
        else:
            await session.execute(text("SELECT pg_advisory_xact_lock(hashtext(:key))"), {"key": key})


async def _sheet(session: AsyncConnection, statement: Select[Any], values: dict[str, str]) -> EntitySheet:
    rows = (await session.execute(statement, values)).all()
    current = tuple(entity_to_domain(r) for r in rows if r.superseded_at is None)
    history = tuple(entity_to_domain(r) for r in rows if r.superseded_at is not None)
    return EntitySheet(current, history)


async def _merge(
    session: AsyncSession,
    where: list[ColumnElement[bool]],
    holder: dict[str, Any],
    entities: Sequence[Entity],
    min_confidence: float,
) -> None:
    """Merge the batch into the holder's current rows: a replaced value's row gets its
    `superseded_at`; a refreshed one is updated in place; anything new becomes a row.

    Rows change by id with plain UPDATEs, so that a row a forget removed meanwhile (forgetting a
    user takes no holder's lock) is simply no longer there, rather than failing the merge."""
    rows = {r.type: r for r in await session.scalars(select(E).where(*where, E.superseded_at.is_(None)))}
    before = {kind: entity_to_domain(row) for kind, row in rows.items()}
    merged, retired = merge_entities(before, entities, min_confidence)
    changes: list[tuple[int, dict[str, Any]]] = []
    new_rows: list[dict[str, Any]] = []
    for old in retired:
        was = before.get(old.type)
        if old.type in rows and was is not None and old == was.superseded(old.superseded_at or old.updated_at):
            changes.append((rows.pop(old.type).id, {"superseded_at": entity_values(old)["superseded_at"]}))
        else:
            new_rows.append({**holder, **entity_values(old)})
    for kind, entity in merged.items():
        if entity == before.get(kind):
            continue
        row = rows.get(kind)
        if row is not None:  # the same value again (or a batch's last): written where the current one is
            changes.append((row.id, entity_values(entity)))
        else:
            new_rows.append({**holder, **entity_values(entity)})
    for row_id, values in changes:
        await session.execute(update(E).where(E.id == row_id).values(values).execution_options(
            synchronize_session=False
        ))
    if new_rows:
        await session.execute(insert(E), new_rows)


async def _remove(session: AsyncSession, where: list[ColumnElement[bool]], kind: str) -> bool:
    current = await session.scalar(select(func.count()).select_from(E).where(
        *where, E.type == kind, E.superseded_at.is_(None)
    ))
    if not current:
        return False
    await session.execute(delete(E).where(*where, E.type == kind))
    return True


async def _deleted(session: AsyncSession, statement: Any) -> int:
    result = await session.execute(statement)
    return int(getattr(result, "rowcount", 0) or 0)
