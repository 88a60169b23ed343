"""A user's kept recall matrix, brought up to date from what was written since its version, never
ranks with what the user's items no longer hold: a write that committed after a later one (its
`changed_at` older than the version's newest) is still read, and an item that left is never recalled,
even when an item that came meanwhile hides its leaving from the count."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, select, update

from domain.conversations.conversation import Conversation
from domain.memory.user_facts import RecallScope
from infrastructure.persistence.database import Database
from infrastructure.persistence.memory_rows import MemoryItemRow
from infrastructure.persistence.sqlalchemy_recall_index import SqlAlchemyRecallIndex, vector_bytes
from tests.integration.memory_record_fixtures import memory_db, memory_pg_url, memory_url  # noqa: F401
from tests.integration.test_recall_index_contract import (  # noqa: F401  (fixtures by name)
    MODEL,
    Items,
    found,
    index,
    items,
    record,
    world,
)

pytestmark = pytest.mark.integration

I = MemoryItemRow  # noqa: E741 - the table's one-letter alias, as in SQL


async def newest_change(db: Database) -> datetime:
    async with db.transaction("test: the newest change") as session:
        newest = await session.scalar(select(func.max(I.changed_at)))
    assert newest is not None
    return newest


async def write_as_of(db: Database, item_id: str, at: datetime, vector: list[float] | None = None,
                      scope: RecallScope | None = None) -> None:
    """A write stamped `at`, as one that took its time before it committed."""
    values: dict[str, object] = {"changed_at": at}
    if vector is not None:
        values |= {"vector": vector_bytes(vector), "model": MODEL}
    if scope is not None:
        values["recall_scope"] = scope.value
    async with db.transaction("test: a late write") as session:
        await session.execute(update(I).where(I.id == item_id).values(**values))


async def shared(recall: SqlAlchemyRecallIndex, made: Items, *vectors: list[float]) -> list[tuple[Conversation, str]]:
    """Conversations with one embedded item each, shared with the account's recall."""
    conversations = [await made.item(vector) for vector in vectors]
    for conversation, _ in conversations:
        await recall.share(conversation.id, RecallScope.ACCOUNT)
    return conversations


async def test_a_vector_that_committed_after_a_later_write_is_still_read(
    index: SqlAlchemyRecallIndex, items: Items, memory_db: Database  # noqa: F811
) -> None:
    (own, _), (_, first_id), (_, second_id) = await shared(index, items, [0.0, 0.0, 1.0], [1.0, 0.0, 0.0],
                                                           [0.0, 1.0, 0.0])
    assert await found(index, exclude=own.id, for_recall=True) == [first_id]  # read whole, and kept
    stamped = await newest_change(memory_db) - timedelta(seconds=2)  # before the kept version's newest
    await write_as_of(memory_db, second_id, stamped, vector=[1.0, 0.1, 0.0])
    await shared(index, items, [0.0, 0.0, 1.0])  # a later write, so that the version moves
    assert await found(index, exclude=own.id, for_recall=True) == [first_id, second_id]


async def test_an_item_that_left_is_never_recalled_though_one_that_came_hides_it_from_the_count(
    index: SqlAlchemyRecallIndex, items: Items, memory_db: Database  # noqa: F811
) -> None:
    (own, _), (_, first_id), (_, gone_id) = await shared(index, items, [0.0, 0.0, 1.0], [0.5, 0.5, 0.0],
                                                         [1.0, 0.0, 0.0])
    assert await found(index, exclude=own.id, for_recall=True) == [gone_id, first_id]  # read whole, and kept
    [(_, came_id)] = await shared(index, items, [0.0, 1.0, 0.0])
    await write_as_of(memory_db, came_id, datetime(2020, 1, 1, tzinfo=UTC))  # stamped before the kept newest
    await write_as_of(memory_db, gone_id, datetime.now(UTC), scope=RecallScope.NONE)  # it leaves
    assert gone_id not in await found(index, exclude=own.id, for_recall=True)
