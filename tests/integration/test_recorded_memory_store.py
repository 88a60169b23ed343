"""`RecordedMemoryStore`: the memory tiers with SQL as their record (SQLite and PostgreSQL) and a
cache in front of it — in-process, or Redis under a throwaway key prefix. What the cache loses
(a restart, a flush, an outage) the record still holds; what the record missed the cache gives back."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from application.errors import StoreUnavailable
from application.memory.recorded_memory_store import MemoryCache, RecordedMemoryStore
from domain.conversations.conversation import Conversation
from domain.ids import ConversationId
from domain.memory.archive import ArchiveEntry
from domain.memory.entities import EntitySheet
from domain.memory.summary import UpkeepState
from domain.memory.window import history_from_turns
from infrastructure.memory.inprocess_memory_store import InProcessMemoryStore
from infrastructure.memory.redis_memory_store import RedisMemoryStore
from infrastructure.persistence.database import Database
from infrastructure.persistence.sqlalchemy_memory_record import SqlAlchemyMemoryRecord
from infrastructure.redis_client import RedisClient
from tests.integration.memory_record_fixtures import (  # noqa: F401  (fixtures by name)
    World,
    entity,
    memory_db,
    memory_pg_url,
    memory_url,
)
from tests.integration.redis_fixtures import dead_redis_client, redis_client  # noqa: F401

pytestmark = pytest.mark.integration


class Caches:
    """The cache under test, and what happens to it: a restart of the process, a flush of Redis."""

    def __init__(self, client: RedisClient | None = None) -> None:
        self.client = client  # None: the in-process cache

    def new(self) -> MemoryCache:
        return InProcessMemoryStore(lock_wait=0.2) if self.client is None else RedisMemoryStore(self.client)

    async def flush(self) -> None:
        """Every key of the prefix deleted (the in-process cache has nothing to flush: see `restart`)."""
        if self.client is not None:
            redis = self.client.commands
            keys = [key async for key in redis.scan_iter(match=f"{self.client.prefix}*", count=500)]
            if keys:
                await redis.delete(*keys)

    async def restart(self) -> MemoryCache:
        """An empty cache: a new process's dicts, or a Redis that kept nothing."""
        await self.flush()
        return self.new()


@pytest.fixture(params=["inprocess", "redis"])
def caches(request: pytest.FixtureRequest) -> Caches:
    return Caches(request.getfixturevalue("redis_client") if request.param == "redis" else None)


@pytest.fixture
def record(memory_db: Database) -> SqlAlchemyMemoryRecord:  # noqa: F811
    return SqlAlchemyMemoryRecord(memory_db)


@pytest.fixture
def world(memory_db: Database) -> World:  # noqa: F811
    return World(memory_db)


@pytest.fixture
async def conversation(world: World) -> Conversation:
    return await conversation_of_three_turns(world)


async def conversation_of_three_turns(world: World) -> Conversation:
    conversation = await world.conversation()
    for n in (1, 2):
        await world.turn(conversation, f"question {n}", n)
    return conversation


class FlakyRecord(SqlAlchemyMemoryRecord):
    """The record whose first `add_archive_entries` fails, as a database that is down just then."""

    failures = 1

    async def add_archive_entries(self, entries: Sequence[ArchiveEntry]) -> None:
        if self.failures:
            self.failures -= 1
            raise StoreUnavailable("The database is unavailable; try again shortly.")
        await super().add_archive_entries(entries)


def first_turn_entry(world: World, conversation: Conversation) -> ArchiveEntry:
    first = world.turns[conversation.id][0]
    return ArchiveEntry(ArchiveEntry.id_for(conversation.id, (first.id,)), conversation.id, "they said hello",
                        (first.id,), first.created_at)


def by_type(sheet: EntitySheet) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    return sorted((e.type, e.value) for e in sheet.current), [(e.type, e.value) for e in sheet.history]


async def remember(store: RecordedMemoryStore, world: World, conversation: Conversation) -> ArchiveEntry:
    """The window, one folded entry and two entity values with history, through the store."""
    await store.restore_window(conversation.id, history_from_turns(world.turns[conversation.id]))
    folded = first_turn_entry(world, conversation)
    assert await store.fold_into_archive(conversation.id, folded)
    await store.record_entities(conversation.id, [entity("date", "monday", 1, source_conversation_id=conversation.id)])
    await store.record_entities(conversation.id, [entity("date", "friday", 2, explicit=False), entity("city", "Lyon")])
    return folded


async def test_a_fresh_cache_still_reads_the_archive_and_entities_from_the_record_and_is_warmed(
    caches: Caches, record: SqlAlchemyMemoryRecord, world: World, conversation: Conversation
) -> None:
    folded = await remember(RecordedMemoryStore(caches.new(), record), world, conversation)
    cache = await caches.restart()
    store = RecordedMemoryStore(cache, record)
    assert await store.archive(conversation.id) == [folded]
    sheet = await store.entity_sheet(conversation.id)
    assert by_type(sheet) == ([("city", "Lyon"), ("date", "friday")], [("date", "monday")])
    assert by_type(await cache.entity_sheet(conversation.id)) == by_type(sheet)


async def test_a_flushed_redis_rebuilds_entities_from_the_record_into_redis(
    redis_client: RedisClient, record: SqlAlchemyMemoryRecord, world: World, conversation: Conversation  # noqa: F811
) -> None:
    caches = Caches(redis_client)
    cache = caches.new()
    store = RecordedMemoryStore(cache, record)
    folded = await remember(store, world, conversation)
    await caches.flush()
    assert await cache.entity_sheet(conversation.id) == EntitySheet()
    assert await store.entity_sheet(conversation.id) == await record.entity_sheet(conversation.id)
    assert await redis_client.commands.hlen(redis_client.key("entity", conversation.id)) == 2
    assert by_type(await cache.entity_sheet(conversation.id)) == by_type(await record.entity_sheet(conversation.id))
    assert await store.archive(conversation.id) == [folded]


async def test_entity_writes_leave_the_cache_as_the_record_has_them(
    caches: Caches, record: SqlAlchemyMemoryRecord, world: World, conversation: Conversation
) -> None:
    cache = caches.new()
    store = RecordedMemoryStore(cache, record)
    await remember(store, world, conversation)
    kept = await record.entity_sheet(conversation.id)
    assert sorted(kept.current, key=lambda e: e.type) == sorted((await cache.entity_sheet(conversation.id)).current,
                                                                key=lambda e: e.type)
    assert (await cache.entity_sheet(conversation.id)).history == kept.history
    assert await store.remove_entity(conversation.id, "date") is True
    assert by_type(await cache.entity_sheet(conversation.id)) == ([("city", "Lyon")], [])
    assert await store.remove_entity(conversation.id, "date") is False


async def test_an_unreachable_redis_still_answers_from_the_record(
    redis_client: RedisClient, record: SqlAlchemyMemoryRecord, world: World, conversation: Conversation  # noqa: F811
) -> None:
    folded = await remember(RecordedMemoryStore(RedisMemoryStore(redis_client), record), world, conversation)
    dead = dead_redis_client()
    try:
        store = RecordedMemoryStore(RedisMemoryStore(dead), record)
        assert await store.entity_sheet(conversation.id) == await record.entity_sheet(conversation.id)
        assert await store.archive(conversation.id) == [folded]
        await store.record_entities(conversation.id, [entity("size", "M", 3)])  # merged in the record all the same
        assert await store.remove_entity(conversation.id, "city") is True
        assert by_type(await store.entity_sheet(conversation.id)) == (
            [("date", "friday"), ("size", "M")], [("date", "monday")]
        )
    finally:
        await dead.close()


async def test_an_entry_folded_while_the_record_failed_is_kept_at_the_next_read_of_the_archive(
    caches: Caches, memory_db: Database, world: World, conversation: Conversation  # noqa: F811
) -> None:
    record = FlakyRecord(memory_db)
    store = RecordedMemoryStore(caches.new(), record)
    await store.restore_window(conversation.id, history_from_turns(world.turns[conversation.id]))
    folded = first_turn_entry(world, conversation)
    assert await store.fold_into_archive(conversation.id, folded) is True  # the cache folded it
    assert await record.archive_entries(conversation.id) == []
    assert await store.archive(conversation.id) == [folded]
    assert await record.archive_entries(conversation.id) == [folded]


async def test_forget_drops_the_record_and_the_cache_of_that_conversation_only(
    caches: Caches, record: SqlAlchemyMemoryRecord, world: World, conversation: Conversation
) -> None:
    cache = caches.new()
    store = RecordedMemoryStore(cache, record)
    await remember(store, world, conversation)
    other = await conversation_of_three_turns(world)
    await remember(store, world, other)
    await store.save_upkeep_state(conversation.id, UpkeepState(world.turns[conversation.id][0].id))
    await store.forget(conversation.id)
    assert (await record.archive_entries(conversation.id), await record.entity_sheet(conversation.id)) == (
        [], EntitySheet()
    )
    assert (await cache.archive(conversation.id), await cache.entity_sheet(conversation.id)) == ([], EntitySheet())
    assert await store.get_window(conversation.id) is None
    assert await store.upkeep_state(conversation.id) == UpkeepState()
    assert len(await store.archive(other.id)) == 1
    assert by_type(await cache.entity_sheet(other.id))[1] == [("date", "monday")]


class OvertakenReads(SqlAlchemyMemoryRecord):
    """The record whose next `entity_sheet`, once read, answers only when `resume` is set: a reader
    overtaken by a writer between its read of the record and its warming of the cache."""

    def __init__(self, database: Database) -> None:
        super().__init__(database)
        self.pause_next, self.paused, self.resume = False, asyncio.Event(), asyncio.Event()

    async def entity_sheet(self, conversation_id: ConversationId) -> EntitySheet:
        sheet = await super().entity_sheet(conversation_id)
        if self.pause_next:
            self.pause_next = False
            self.paused.set()
            await self.resume.wait()
        return sheet


async def test_a_reader_overtaken_by_a_writer_leaves_the_cache_as_the_record(
    caches: Caches, memory_db: Database, conversation: Conversation  # noqa: F811
) -> None:
    record = OvertakenReads(memory_db)
    await record.record_entities(conversation.id, [entity("city", "Lyon")])
    cache = caches.new()
    store = RecordedMemoryStore(cache, record)
    record.pause_next = True
    reader = asyncio.create_task(store.entity_sheet(conversation.id))  # a miss: it reads the record
    await record.paused.wait()
    await store.record_entities(conversation.id, [entity("date", "friday")])  # merged and cached first
    record.resume.set()
    assert by_type(await reader) == ([("city", "Lyon")], [])  # what it read, cached after the writer's
    assert by_type(await cache.entity_sheet(conversation.id)) == ([("city", "Lyon"), ("date", "friday")], [])


class CountedReads(SqlAlchemyMemoryRecord):
    """The record, counting its reads of a conversation's entities."""

    def __init__(self, database: Database) -> None:
        super().__init__(database)
        self.sheet_reads = 0

    async def entity_sheet(self, conversation_id: ConversationId) -> EntitySheet:
        self.sheet_reads += 1
        return await super().entity_sheet(conversation_id)


async def test_a_conversation_without_entities_reads_the_record_once_then_the_cache_until_a_merge(
    caches: Caches, memory_db: Database, conversation: Conversation  # noqa: F811
) -> None:
    record = CountedReads(memory_db)
    store = RecordedMemoryStore(caches.new(), record)
    assert await store.entity_sheet(conversation.id) == EntitySheet()
    reads_to_warm = record.sheet_reads  # the read, and the check after caching it
    for _ in range(5):
        assert await store.entity_sheet(conversation.id) == EntitySheet()
    assert record.sheet_reads == reads_to_warm
    await store.record_entities(conversation.id, [entity("city", "Lyon")])
    assert by_type(await store.entity_sheet(conversation.id)) == ([("city", "Lyon")], [])


async def test_a_reader_of_no_entities_overtaken_by_the_first_merge_leaves_no_empty_copy(
    caches: Caches, memory_db: Database, conversation: Conversation  # noqa: F811
) -> None:
    record = OvertakenReads(memory_db)
    cache = caches.new()
    store = RecordedMemoryStore(cache, record)
    record.pause_next = True
    reader = asyncio.create_task(store.entity_sheet(conversation.id))  # reads the empty record
    await record.paused.wait()
    await store.record_entities(conversation.id, [entity("date", "friday")])
    record.resume.set()
    assert await reader == EntitySheet()  # what it read, before the merge
    assert by_type(await cache.cached_entities(conversation.id) or EntitySheet()) == ([("date", "friday")], [])
    assert by_type(await store.entity_sheet(conversation.id)) == ([("date", "friday")], [])


class UnreadableAfterWrites(SqlAlchemyMemoryRecord):
    """The record, failing every read of a conversation's entities once `broken` is set."""

    broken = False

    async def entity_sheet(self, conversation_id: ConversationId) -> EntitySheet:
        if self.broken:
            raise StoreUnavailable("The database is unavailable.")
        return await super().entity_sheet(conversation_id)


async def test_a_write_whose_sheet_cannot_be_read_back_leaves_no_older_copy(
    caches: Caches, memory_db: Database, conversation: Conversation  # noqa: F811
) -> None:
    record = UnreadableAfterWrites(memory_db)
    cache = caches.new()
    store = RecordedMemoryStore(cache, record)
    assert await store.entity_sheet(conversation.id) == EntitySheet()  # an empty copy, warmed
    record.broken = True
    with pytest.raises(StoreUnavailable):  # merged, then the read back failed
        await store.record_entities(conversation.id, [entity("city", "Lyon")])
    assert await cache.cached_entities(conversation.id) is None
    record.broken = False
    assert by_type(await store.entity_sheet(conversation.id)) == ([("city", "Lyon")], [])


async def test_concurrent_entity_writes_and_reads_leave_the_cache_as_the_record_or_a_miss(
    caches: Caches, record: SqlAlchemyMemoryRecord, conversation: Conversation
) -> None:
    cache = caches.new()
    store = RecordedMemoryStore(cache, record)
    writes = [store.record_entities(conversation.id, [entity(f"t{n}", f"v{n}", n)]) for n in range(10)]
    writes += [store.record_entities(conversation.id, [entity("date", f"day {n}", n)]) for n in range(10)]
    reads = [store.entity_sheet(conversation.id) for _ in range(20)]
    await asyncio.gather(*(work for pair in zip(writes, reads, strict=True) for work in pair))
    kept = by_type(await record.entity_sheet(conversation.id))
    assert len(kept[0]) == 11
    # A record that kept changing under every warm leaves the cache holding none (a miss), never stale.
    cached = await cache.cached_entities(conversation.id)
    assert cached is None or by_type(cached) == kept
    assert by_type(await store.entity_sheet(conversation.id)) == kept
    assert by_type(await cache.entity_sheet(conversation.id)) == kept


class WatchedForget(SqlAlchemyMemoryRecord):
    """The record that lets the store's reads in just before and just after it forgets a conversation."""

    def __init__(self, database: Database) -> None:
        super().__init__(database)
        self.reader: RecordedMemoryStore | None = None

    async def forget_conversation(self, conversation_id: ConversationId) -> None:
        assert self.reader is not None
        await self.reader.entity_sheet(conversation_id)  # a miss would warm the cache from the record
        await super().forget_conversation(conversation_id)
        await self.reader.entity_sheet(conversation_id)
        await self.reader.archive(conversation_id)  # an entry only the cache still had would be kept again


async def test_reads_while_a_conversation_is_forgotten_bring_nothing_back(
    caches: Caches, memory_db: Database, world: World, conversation: Conversation  # noqa: F811
) -> None:
    record = WatchedForget(memory_db)
    cache = caches.new()
    store = record.reader = RecordedMemoryStore(cache, record)
    await remember(store, world, conversation)
    await store.forget(conversation.id)
    assert (await record.archive_entries(conversation.id), await record.entity_sheet(conversation.id)) == (
        [], EntitySheet()
    )
    assert (await cache.archive(conversation.id), await cache.entity_sheet(conversation.id)) == ([], EntitySheet())
