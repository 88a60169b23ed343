"""Forgetting in SQL, on SQLite and PostgreSQL: a conversation's memory record
(`SqlAlchemyMemoryRecord.forget_conversation`), everything memory holds of one end user
(`forget_user`, `conversations_with_memory`), and the end user's conversations and workflow runs
themselves (`SqlAlchemyConversationPurge`) — each leaving every other end user and account untouched."""

from __future__ import annotations

import asyncio

import pytest

from application.ports.conversation_purge import Purged
from domain.conversations.conversation import Conversation
from domain.ids import AppId, EndUserId, OwnerId
from domain.memory.entities import EntityScope, EntitySheet
from domain.memory.user_facts import FactHolder, ForgetCounts, RecallKind
from infrastructure.persistence.database import Database
from infrastructure.persistence.sqlalchemy_conversation_purge import SqlAlchemyConversationPurge
from infrastructure.persistence.sqlalchemy_memory_record import SqlAlchemyMemoryRecord
from infrastructure.persistence.sqlalchemy_recall_index import SqlAlchemyRecallIndex
from tests.integration.memory_record_fixtures import (  # noqa: F401  (fixtures by name)
    ALICE,
    ANN,
    BEN,
    BOB,
    HELPER,
    OTHER_AGENT,
    T0,
    World,
    entity,
    entry,
    memory_db,
    memory_pg_url,
    memory_url,
)
from tests.integration.recorded_runs import node_runs, recorded_run, runs_left

pytestmark = pytest.mark.integration

MODEL = "lexical"


@pytest.fixture
def world(memory_db: Database) -> World:  # noqa: F811
    return World(memory_db)


@pytest.fixture
def record(memory_db: Database) -> SqlAlchemyMemoryRecord:  # noqa: F811
    return SqlAlchemyMemoryRecord(memory_db)


@pytest.fixture
def index(memory_db: Database) -> SqlAlchemyRecallIndex:  # noqa: F811
    return SqlAlchemyRecallIndex(memory_db)


class Memories:
    """Every tier of the record for one conversation or one end user."""

    def __init__(self, world: World, record: SqlAlchemyMemoryRecord, index: SqlAlchemyRecallIndex) -> None:
        self.world, self.record, self.index = world, record, index

    async def conversation(self, owner: OwnerId = ALICE, user: EndUserId = ANN, agent: AppId = HELPER,
                           minute: int = 0) -> Conversation:
        """A conversation with two entity rows (a value and its history), an archive entry and a summary item."""
        conversation = await self.world.conversation(owner, user, agent, minute=minute)
        await self.record.record_entities(conversation.id, [entity("date", "monday", 1)])
        await self.record.record_entities(conversation.id, [entity("date", "friday", 2)])
        await self.record.add_archive_entries([entry(conversation.id, "m1", summary=f"{user} booked")])
        summarised = await self.world.summarise(conversation, f"{user} booked a table.")
        await self.index.index_summary(summarised, [self.world.turns[conversation.id][-1].id])
        return summarised

    async def facts(self, holder: FactHolder) -> None:
        """Two rows of one fact: a value and its history."""
        await self.record.record_user_facts(holder, [entity("city", "Porto", 1, scope=EntityScope.USER)])
        await self.record.record_user_facts(holder, [entity("city", "Lyon", 2, scope=EntityScope.USER)])

    async def item_kinds(self, conversation: Conversation) -> list[RecallKind]:
        return sorted(item.kind for item in await self.index.unembedded(conversation.id, MODEL))

    async def intact(self, conversation: Conversation) -> bool:
        sheet = await self.record.entity_sheet(conversation.id)
        kept = await self.world.store.get_conversation(conversation.id, conversation.owner)
        return (len(sheet.current), len(sheet.history), len(await self.record.archive_entries(conversation.id)),
                await self.item_kinds(conversation), kept.summary if kept else None) == (
            1, 1, 1, [RecallKind.ARCHIVE, RecallKind.SUMMARY], conversation.summary
        )


@pytest.fixture
def memories(world: World, record: SqlAlchemyMemoryRecord, index: SqlAlchemyRecallIndex) -> Memories:
    return Memories(world, record, index)


async def test_forgetting_a_conversation_drops_its_entities_archive_and_summary_item_only(
    memories: Memories, record: SqlAlchemyMemoryRecord
) -> None:
    conversation, other = await memories.conversation(), await memories.conversation()
    await memories.facts(FactHolder(ALICE, ANN))
    await record.forget_conversation(conversation.id)
    assert await record.entity_sheet(conversation.id) == EntitySheet()
    assert await record.archive_entries(conversation.id) == []
    assert await memories.item_kinds(conversation) == []
    assert await memories.intact(other)
    assert len((await record.user_facts(FactHolder(ALICE, ANN))).history) == 1
    await record.forget_conversation(conversation.id)  # nothing left: harmless


async def test_forgetting_a_user_counts_every_row_it_removed_and_blanks_their_summaries(
    memories: Memories, record: SqlAlchemyMemoryRecord, world: World
) -> None:
    theirs = [await memories.conversation(), await memories.conversation(agent=OTHER_AGENT)]
    await world.delete(theirs[1])  # a deleted conversation's memory goes too (its summary went with the delete)
    await memories.facts(FactHolder(ALICE, ANN))
    await memories.facts(FactHolder(ALICE, ANN, HELPER))
    others = [await memories.conversation(user=BEN), await memories.conversation(owner=BOB)]
    for holder in (FactHolder(ALICE, BEN), FactHolder(BOB, ANN)):
        await memories.facts(holder)

    counts = await record.forget_user(ALICE, ANN)

    assert counts == ForgetCounts(facts=4, conversation_entities=4, archive_entries=2, summaries=1)
    for conversation in theirs:
        assert (await record.entity_sheet(conversation.id), await record.archive_entries(conversation.id)) == (
            EntitySheet(), []
        )
        assert await memories.item_kinds(conversation) == []
    assert (await world.store.get_conversation(theirs[0].id, ALICE)).summary == ""  # type: ignore[union-attr]
    for holder in (FactHolder(ALICE, ANN), FactHolder(ALICE, ANN, HELPER)):
        assert await record.user_facts(holder) == EntitySheet()
    for conversation in others:
        assert await memories.intact(conversation)
    for holder in (FactHolder(ALICE, BEN), FactHolder(BOB, ANN)):
        assert len((await record.user_facts(holder)).history) == 1
    assert await record.forget_user(ALICE, ANN) == ForgetCounts()


async def test_the_conversations_with_memory_are_the_live_ones_with_entities_archive_or_summary_newest_first(
    record: SqlAlchemyMemoryRecord, world: World
) -> None:
    with_entities = await world.conversation(minute=3)
    await record.record_entities(with_entities.id, [entity("date", "monday")])
    with_archive = await world.conversation(minute=1)
    await record.add_archive_entries([entry(with_archive.id, "m1")])
    with_summary = await world.summarise(await world.conversation(minute=2), "A summary.")
    await world.conversation(minute=4)  # nothing remembered
    deleted = await world.conversation(minute=5)
    await record.record_entities(deleted.id, [entity("date", "monday")])
    await world.delete(deleted)
    bens = await world.conversation(user=BEN, minute=6)
    await record.record_entities(bens.id, [entity("date", "monday")])
    await record.record_user_facts(FactHolder(ALICE, ANN), [entity("city", "Lyon", scope=EntityScope.USER)])

    assert await record.conversations_with_memory(ALICE, ANN) == [with_entities.id, with_summary.id, with_archive.id]
    assert await record.conversations_with_memory(BOB, ANN) == []


async def test_purging_an_end_user_removes_their_conversations_messages_and_steps_only(
    memory_db: Database, world: World  # noqa: F811
) -> None:
    live = await world.conversation(steps=2)
    await world.turn(live, "again", 5, steps=1)
    deleted = await world.conversation()
    await world.delete(deleted)
    bens, bobs = await world.conversation(user=BEN, steps=2), await world.conversation(owner=BOB, steps=1)
    purge = SqlAlchemyConversationPurge(memory_db)

    purged = await purge.purge_end_user(ALICE, ANN)

    theirs = [*world.turns[live.id], *world.turns[deleted.id]]
    assert (purged.conversations, purged.messages) == (2, 3)
    assert sorted(purged.task_ids) == sorted(turn.task_id for turn in theirs)
    for turn in theirs:
        assert await world.store.get_message(turn.id, ALICE) is None
        assert await world.store.list_steps(turn.id) == []
    assert await world.store.get_conversation(live.id, ALICE) is None
    for conversation, steps in ((bens, 2), (bobs, 1)):
        assert await world.store.get_conversation(conversation.id, conversation.owner) is not None
        assert len(await world.store.list_steps(world.turns[conversation.id][0].id)) == steps
    assert await purge.purge_end_user(ALICE, ANN) == Purged(0, 0, ())


async def test_purging_an_end_user_removes_their_workflow_runs_with_their_node_runs_only(
    memory_db: Database, world: World  # noqa: F811
) -> None:
    conversation = await world.conversation()
    theirs = {await recorded_run(memory_db, T0, message=world.turns[conversation.id][0], nodes=3),  # a turn's
              await recorded_run(memory_db, T0)}  # a direct one
    bens = await recorded_run(memory_db, T0, end_user=BEN)
    bobs = await recorded_run(memory_db, T0, owner=BOB)

    purged = await SqlAlchemyConversationPurge(memory_db).purge_end_user(ALICE, ANN)

    assert (purged.conversations, purged.messages, set(purged.run_ids)) == (1, 1, theirs)
    assert await runs_left(memory_db) == {bens: 2, bobs: 2}
    assert await node_runs(memory_db) == 4


async def test_forgetting_while_values_are_merged_fails_no_merge_and_leaves_one_current_value_per_type(
    record: SqlAlchemyMemoryRecord, world: World
) -> None:
    conversation, holder = await world.conversation(), FactHolder(ALICE, ANN)
    merges = [record.record_user_facts(holder, [entity("city", f"city {n}", n, scope=EntityScope.USER)])
              for n in range(15)]
    merges += [record.record_entities(conversation.id, [entity("date", f"day {n}", n)]) for n in range(15)]
    forgets = [record.forget_user(ALICE, ANN) for _ in range(3)] + [record.forget_conversation(conversation.id)]
    await asyncio.gather(*(work for pair in zip(merges, forgets * 8, strict=False) for work in pair))
    for sheet in (await record.user_facts(holder), await record.entity_sheet(conversation.id)):
        assert len(sheet.current) <= 1
