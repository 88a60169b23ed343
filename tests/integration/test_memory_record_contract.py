"""The memory record's contract in SQL (`SqlAlchemyMemoryRecord`: ArchiveRecord, EntityMemory,
UserFacts), on SQLite and PostgreSQL: archive entries, a conversation's entities and an end user's
facts with their whole history, and merges of concurrent writers under the holder's lock.

Forgetting and the purge are in test_memory_record_forgetting_contract.py, the recall index
(`SqlAlchemyRecallIndex`) in test_recall_index_contract.py."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import timedelta, timezone

import pytest
from sqlalchemy import func, select

from domain.ids import ConversationId, MessageId
from domain.memory.archive import ArchiveEntry
from domain.memory.entities import EntityScope, EntitySheet, EntitySource
from domain.memory.user_facts import FactHolder
from infrastructure.persistence.database import Database
from infrastructure.persistence.memory_rows import MemoryEntityRow, MemoryItemRow
from infrastructure.persistence.sqlalchemy_memory_record import SqlAlchemyMemoryRecord
from tests.integration.memory_record_fixtures import (  # noqa: F401  (fixtures by name)
    ALICE,
    ANN,
    BEN,
    BOB,
    HELPER,
    OTHER_AGENT,
    World,
    at,
    entity,
    entry,
    memory_db,
    memory_pg_url,
    memory_url,
)

pytestmark = pytest.mark.integration

SHARED = FactHolder(ALICE, ANN)
EAST = timezone(timedelta(hours=2))  # the same instants, which SQLite must not keep as wall-clock digits
API_FACT = {"scope": EntityScope.USER, "source": EntitySource.API}


@pytest.fixture
def record(memory_db: Database) -> SqlAlchemyMemoryRecord:  # noqa: F811
    return SqlAlchemyMemoryRecord(memory_db)


@pytest.fixture
def world(memory_db: Database) -> World:  # noqa: F811
    return World(memory_db)


async def current_rows_by_type(database: Database) -> dict[str, int]:
    """How many rows of each type are current, over every holder."""
    e = MemoryEntityRow
    async with database.transaction("count") as session:
        rows = await session.execute(select(e.type, func.count()).where(e.superseded_at.is_(None)).group_by(e.type))
        return {kind: count for kind, count in rows.all()}


def values(sheet: EntitySheet) -> tuple[list[str], list[str]]:
    return sorted(e.value for e in sheet.current), [e.value for e in sheet.history]


# --- the archive ------------------------------------------------------------------------------


async def test_archive_entries_round_trip_with_their_sources_oldest_first_and_their_conversations_holder(
    record: SqlAlchemyMemoryRecord, world: World, memory_db: Database  # noqa: F811
) -> None:
    conversation = await world.conversation(agent=OTHER_AGENT)
    other = await world.conversation()
    late, early = entry(conversation.id, "m3", "m4", minute=9), entry(conversation.id, "m1", "m2", minute=2)
    east = ArchiveEntry("east", conversation.id, "east", (MessageId("m5"),), at(20).astimezone(EAST))
    await record.add_archive_entries([late, early, east, entry(other.id, "x1")])
    assert await record.archive_entries(conversation.id) == [early, late, east]
    async with memory_db.transaction("read") as session:
        row = await session.get_one(MemoryItemRow, early.id)
    assert (row.owner, row.end_user, row.agent_id, row.kind) == (ALICE, ANN, OTHER_AGENT, "archive")
    assert await record.archive_entries(ConversationId("never-seen")) == []


async def test_adding_an_entry_again_keeps_the_first(record: SqlAlchemyMemoryRecord, world: World) -> None:
    conversation = await world.conversation()
    first = entry(conversation.id, "m1", summary="the first words")
    again = ArchiveEntry(first.id, conversation.id, "other words", first.source_message_ids, at(5))
    await record.add_archive_entries([first, first])
    await record.add_archive_entries([again])
    await record.add_archive_entries([])
    assert await record.archive_entries(conversation.id) == [first]


# --- a conversation's entities ----------------------------------------------------------------


async def test_a_new_value_replaces_the_old_which_keeps_its_valid_from_superseded_at_and_source(
    record: SqlAlchemyMemoryRecord, world: World  # noqa: F811
) -> None:
    conversation = await world.conversation()
    old = entity("city", "Porto", 1, 0.8, "m1", explicit=False, source_conversation_id=conversation.id)
    new = entity("city", "Lyon", 5, 0.95, "m2", scope=EntityScope.USER, source_conversation_id=conversation.id)
    await record.record_entities(conversation.id, [old])
    await record.record_entities(conversation.id, [replace(new, updated_at=new.updated_at.astimezone(EAST))])
    sheet = await record.entity_sheet(conversation.id)
    assert sheet == EntitySheet((new,), (old.superseded(at(5)),))
    assert [e.updated_at.utcoffset() for e in (*sheet.current, *sheet.history)] == [timedelta(0)] * 2
    assert (await record.entity_sheet((await world.conversation()).id)) == EntitySheet()


async def test_the_same_value_again_refreshes_the_current_row_in_place(
    record: SqlAlchemyMemoryRecord, world: World, memory_db: Database  # noqa: F811
) -> None:
    conversation = await world.conversation()
    await record.record_entities(conversation.id, [entity("city", "Paris", 1, 0.6, "m1")])
    await record.record_entities(conversation.id, [entity("city", " paris ", 3, 0.5, "m2")])
    [current] = (await record.entity_sheet(conversation.id)).current
    assert (current.value, current.confidence, current.source_message_id, current.updated_at) == (
        " paris ", 0.6, "m2", at(3)
    )
    assert (await record.entity_sheet(conversation.id)).history == ()
    assert await current_rows_by_type(memory_db) == {"city": 1}


async def test_a_late_value_goes_to_history_and_one_below_the_threshold_never_displaces(
    record: SqlAlchemyMemoryRecord, world: World  # noqa: F811
) -> None:
    conversation = await world.conversation()
    await record.record_entities(conversation.id, [entity("date", "friday", 5)])
    await record.record_entities(conversation.id, [entity("date", "monday", 2)], min_confidence=0.7)
    await record.record_entities(conversation.id, [entity("date", "today", 9, 0.6)], min_confidence=0.7)
    sheet = await record.entity_sheet(conversation.id)
    assert values(sheet) == (["friday"], ["monday", "today"])
    assert [e.superseded_at for e in sheet.history] == [at(5), at(9)]


async def test_a_batch_of_one_type_is_merged_in_time_order_with_every_value_kept(
    record: SqlAlchemyMemoryRecord, world: World, memory_db: Database  # noqa: F811
) -> None:
    conversation = await world.conversation()
    await record.record_entities(conversation.id, [entity("date", "a", 0), entity("size", "M", 0)])
    batch = [entity("date", "c", 3), entity("date", "a", 1, 1.0), entity("date", "b", 2), entity("size", "M", 4)]
    await record.record_entities(conversation.id, batch)
    sheet = await record.entity_sheet(conversation.id)
    assert values(sheet) == (["M", "c"], ["a", "b"])
    assert [(e.confidence, e.updated_at, e.superseded_at) for e in sheet.history] == [
        (1.0, at(1), at(2)), (0.9, at(2), at(3))
    ]
    assert await current_rows_by_type(memory_db) == {"date": 1, "size": 1}


async def test_removing_an_entity_drops_its_value_and_history_and_answers_false_when_absent(
    record: SqlAlchemyMemoryRecord, world: World  # noqa: F811
) -> None:
    conversation, other = await world.conversation(), await world.conversation()
    for holder in (conversation, other):
        await record.record_entities(holder.id, [entity("date", "a", 1), entity("city", "Porto")])
        await record.record_entities(holder.id, [entity("date", "b", 2), entity("city", "Lyon", 2)])
    assert await record.remove_entity(conversation.id, "date") is True
    assert await record.remove_entity(conversation.id, "date") is False
    assert await record.remove_entity(conversation.id, "never") is False
    assert values(await record.entity_sheet(conversation.id)) == (["Lyon"], ["Porto"])
    assert values(await record.entity_sheet(other.id)) == (["Lyon", "b"], ["Porto", "a"])


# --- an end user's facts ----------------------------------------------------------------------


async def test_user_facts_are_kept_apart_by_agent_end_user_and_owner(record: SqlAlchemyMemoryRecord) -> None:
    holders = [SHARED, FactHolder(ALICE, ANN, HELPER), FactHolder(ALICE, ANN, OTHER_AGENT),
               FactHolder(ALICE, BEN), FactHolder(BOB, ANN)]
    for n, holder in enumerate(holders):
        await record.record_user_facts(holder, [entity("name", f"name {n}", scope=EntityScope.USER)])
    for n, holder in enumerate(holders):
        assert values(await record.user_facts(holder)) == ([f"name {n}"], [])
    assert await record.user_facts(FactHolder(BOB, BEN)) == EntitySheet()


async def test_user_facts_are_not_a_conversations_entities(record: SqlAlchemyMemoryRecord, world: World) -> None:
    conversation = await world.conversation()
    await record.record_user_facts(SHARED, [entity("name", "Ann", scope=EntityScope.USER)])
    await record.record_entities(conversation.id, [entity("name", "Annie")])
    assert values(await record.user_facts(SHARED)) == (["Ann"], [])
    assert values(await record.entity_sheet(conversation.id)) == (["Annie"], [])


async def test_a_fact_set_through_the_api_gives_way_to_an_explicit_statement_only(
    record: SqlAlchemyMemoryRecord,
) -> None:
    by_hand = entity("diet", "vegan", 1, 1.0, "", **API_FACT)
    await record.record_user_facts(SHARED, [by_hand])
    inferred = entity("diet", "vegetarian", 2, 0.99, "m2", scope=EntityScope.USER, explicit=False)
    echo = entity("diet", "Vegan", 3, 0.5, "m3", scope=EntityScope.USER, explicit=False)
    await record.record_user_facts(SHARED, [inferred, echo])
    assert await record.user_facts(SHARED) == EntitySheet((by_hand,), (inferred.superseded(at(2)),))
    said = entity("diet", "pescatarian", 4, 0.9, "m4", scope=EntityScope.USER, explicit=True)
    await record.record_user_facts(SHARED, [said])
    sheet = await record.user_facts(SHARED)
    assert sheet.current == (said,)
    assert sheet.history_of("diet") == (by_hand.superseded(at(4)), inferred.superseded(at(2)))


async def test_a_fact_set_again_through_the_api_replaces_the_one_set_before(record: SqlAlchemyMemoryRecord) -> None:
    await record.record_user_facts(SHARED, [entity("city", "Porto", 1, 1.0, "", **API_FACT)])
    await record.record_user_facts(SHARED, [entity("city", "Lyon", 2, 0.7, "", **API_FACT)])
    assert values(await record.user_facts(SHARED)) == (["Lyon"], ["Porto"])


async def test_removing_a_fact_drops_value_and_history_of_that_holder_only(record: SqlAlchemyMemoryRecord) -> None:
    agents_own = FactHolder(ALICE, ANN, HELPER)
    for holder in (SHARED, agents_own):
        await record.record_user_facts(holder, [entity("city", "Porto", 1, scope=EntityScope.USER)])
        await record.record_user_facts(holder, [entity("city", "Lyon", 2, scope=EntityScope.USER)])
    assert await record.remove_user_fact(SHARED, "city") is True
    assert await record.remove_user_fact(SHARED, "city") is False
    assert await record.remove_user_fact(FactHolder(BOB, ANN), "city") is False
    assert await record.user_facts(SHARED) == EntitySheet()
    assert values(await record.user_facts(agents_own)) == (["Lyon"], ["Porto"])


# --- concurrent writers -----------------------------------------------------------------------


async def test_concurrent_fact_merges_into_one_holder_lose_nothing_and_keep_one_current_value_per_type(
    record: SqlAlchemyMemoryRecord, memory_db: Database  # noqa: F811
) -> None:
    writes = [record.record_user_facts(SHARED, [entity(f"t{n}", f"v{n}", scope=EntityScope.USER)])
              for n in range(20)]
    writes += [record.record_user_facts(SHARED, [entity("date", f"day {n}", n, scope=EntityScope.USER)])
               for n in range(20)]
    await asyncio.gather(*writes)
    sheet = await record.user_facts(SHARED)
    assert {e.type for e in sheet.current} == {"date", *(f"t{n}" for n in range(20))}
    assert next(e.value for e in sheet.current if e.type == "date") == "day 19"
    assert sorted(e.value for e in sheet.history) == sorted(f"day {n}" for n in range(19))
    assert set((await current_rows_by_type(memory_db)).values()) == {1}


async def test_concurrent_entity_merges_into_one_conversation_lose_nothing(
    record: SqlAlchemyMemoryRecord, world: World, memory_db: Database  # noqa: F811
) -> None:
    conversation = await world.conversation()
    same_value = [record.record_entities(conversation.id, [entity("city", "Porto", n, n / 100)]) for n in range(20)]
    new_values = [record.record_entities(conversation.id, [entity("date", f"day {n}", n)]) for n in range(20)]
    await asyncio.gather(*same_value, *new_values)
    sheet = await record.entity_sheet(conversation.id)
    assert sorted((e.type, e.value, e.confidence) for e in sheet.current) == [("city", "Porto", 0.19),
                                                                               ("date", "day 19", 0.9)]
    assert len(sheet.history) == 19
    assert await current_rows_by_type(memory_db) == {"city": 1, "date": 1}


async def test_a_removal_during_concurrent_merges_leaves_a_consistent_sheet(
    record: SqlAlchemyMemoryRecord, world: World, memory_db: Database  # noqa: F811
) -> None:
    conversation = await world.conversation()
    await record.record_entities(conversation.id, [entity("date", "day 0")])
    writes = [record.record_entities(conversation.id, [entity("date", f"day {n}", n)]) for n in range(1, 21)]
    removals = [record.remove_entity(conversation.id, "date") for _ in range(10)]
    await asyncio.gather(*writes, *removals)  # none fails: a removal waits for the merge it would break
    assert set((await current_rows_by_type(memory_db)).values()) <= {1}
