"""`RecordedUserFacts`: end users' facts with SQL as their record (SQLite and PostgreSQL) and a
cache in front (in-process, or Redis under a throwaway prefix). A turn's recall reads the cache; a
write, however it races a read, never leaves an older sheet cached."""

from __future__ import annotations

import asyncio

import pytest

from application.errors import StoreUnavailable
from application.memory.recorded_user_facts import RecordedUserFacts
from application.ports.memory_store import UserFactCache
from domain.ids import AppId
from domain.memory.entities import Entity, EntityScope, EntitySheet
from domain.memory.user_facts import FactHolder
from infrastructure.memory.inprocess_memory_store import InProcessUserFactCache
from infrastructure.memory.redis_user_fact_cache import RedisUserFactCache
from infrastructure.persistence.database import Database
from infrastructure.persistence.sqlalchemy_memory_record import SqlAlchemyMemoryRecord
from tests.integration.memory_record_fixtures import (  # noqa: F401  (fixtures by name)
    ALICE,
    ANN,
    World,
    entity,
    memory_db,
    memory_pg_url,
    memory_url,
)
from tests.integration.redis_fixtures import dead_redis_client, redis_client  # noqa: F401

pytestmark = pytest.mark.integration

SHARED, HELPERS = FactHolder(ALICE, ANN), FactHolder(ALICE, ANN, AppId("helper"))


class WatchedRecord(SqlAlchemyMemoryRecord):
    """The record, counting its reads of user facts; its next read, once made, can be held until
    `resume` is set (a reader overtaken by a writer between reading and warming)."""

    def __init__(self, database: Database) -> None:
        super().__init__(database)
        self.reads, self.pause_next, self.paused, self.resume = 0, False, asyncio.Event(), asyncio.Event()

    async def user_facts(self, holder: FactHolder) -> EntitySheet:
        self.reads += 1
        sheet = await super().user_facts(holder)
        if self.pause_next:
            self.pause_next = False
            self.paused.set()
            await self.resume.wait()
        return sheet


@pytest.fixture(params=["inprocess", "redis"])
def cache(request: pytest.FixtureRequest) -> UserFactCache:
    if request.param == "inprocess":
        return InProcessUserFactCache()
    return RedisUserFactCache(request.getfixturevalue("redis_client"))


@pytest.fixture
def record(memory_db: Database) -> WatchedRecord:  # noqa: F811
    return WatchedRecord(memory_db)


@pytest.fixture
def world(memory_db: Database) -> World:  # noqa: F811
    return World(memory_db)


def values(sheet: EntitySheet) -> tuple[list[str], list[str]]:
    return sorted(e.value for e in sheet.current), [e.value for e in sheet.history]


def fact(value: str, minute: int = 0) -> list[Entity]:
    return [entity("name", value, minute, scope=EntityScope.USER)]


async def test_facts_are_read_from_the_record_once_then_from_the_cache_until_a_write(
    cache: UserFactCache, record: WatchedRecord
) -> None:
    facts = RecordedUserFacts(cache, record)
    assert await facts.user_facts(SHARED) == EntitySheet()
    reads_to_warm = record.reads  # the read, and the check after caching it
    for _ in range(5):
        assert await facts.user_facts(SHARED) == EntitySheet()
    assert record.reads == reads_to_warm
    await facts.record_user_facts(SHARED, fact("Ann", 1))
    await facts.record_user_facts(SHARED, fact("Annie", 2))
    assert values(await facts.user_facts(SHARED)) == (["Annie"], ["Ann"])  # the whole history, as recorded
    assert await facts.user_facts(SHARED) == await record.user_facts(SHARED)


async def test_a_removed_fact_is_gone_from_every_holders_copy(cache: UserFactCache, record: WatchedRecord) -> None:
    facts = RecordedUserFacts(cache, record)
    await facts.record_user_facts(HELPERS, fact("Ann"))
    await facts.record_user_facts(SHARED, fact("Ann"))
    assert values(await facts.user_facts(HELPERS)) == (["Ann"], [])
    assert values(await facts.user_facts(SHARED)) == (["Ann"], [])
    assert await facts.remove_user_fact(SHARED, "name")
    assert await facts.user_facts(SHARED) == EntitySheet()
    assert values(await facts.user_facts(HELPERS)) == (["Ann"], [])


async def test_a_reader_overtaken_by_a_write_leaves_no_older_copy(cache: UserFactCache, record: WatchedRecord) -> None:
    facts = RecordedUserFacts(cache, record)
    await facts.record_user_facts(SHARED, fact("Ann", 1))
    record.pause_next = True
    reader = asyncio.create_task(facts.user_facts(SHARED))  # a miss: it reads the record
    await record.paused.wait()
    await facts.record_user_facts(SHARED, fact("Annie", 2))  # written and the cache dropped meanwhile
    record.resume.set()
    assert values(await reader) == (["Ann"], [])  # what it read, before the write
    cached = await cache.cached_user_facts(SHARED)
    assert cached is None or values(cached) == (["Annie"], ["Ann"])
    assert values(await facts.user_facts(SHARED)) == (["Annie"], ["Ann"])


async def test_forgetting_an_end_user_leaves_nothing_cached_or_recorded(
    cache: UserFactCache, record: WatchedRecord, world: World
) -> None:
    facts = RecordedUserFacts(cache, record)
    await world.conversation()
    await facts.record_user_facts(SHARED, fact("Ann"))
    assert values(await facts.user_facts(SHARED)) == (["Ann"], [])
    counts = await facts.forget_user(ALICE, ANN)
    assert counts.facts == 1
    assert await cache.cached_user_facts(SHARED) is None
    assert await facts.user_facts(SHARED) == EntitySheet() == await record.user_facts(SHARED)


async def test_an_unreachable_redis_still_answers_from_the_record(record: WatchedRecord) -> None:
    client = dead_redis_client()
    try:
        facts = RecordedUserFacts(RedisUserFactCache(client), record)
        await facts.record_user_facts(SHARED, fact("Ann"))
        assert values(await facts.user_facts(SHARED)) == (["Ann"], [])
    finally:
        await client.close()



class FailingCheck(WatchedRecord):
    """The record whose second read (the check after warming) fails, once the first has been made."""

    async def user_facts(self, holder: FactHolder) -> EntitySheet:
        if self.reads == 1:
            self.reads += 1
            raise StoreUnavailable("The database is unavailable.")
        return await super().user_facts(holder)


async def test_a_copy_whose_check_failed_is_not_kept(cache: UserFactCache, memory_db: Database) -> None:  # noqa: F811
    record = FailingCheck(memory_db)
    await record.record_user_facts(SHARED, fact("Ann"))
    facts = RecordedUserFacts(cache, record)
    assert values(await facts.user_facts(SHARED)) == (["Ann"], [])  # the reader has what it read
    assert await cache.cached_user_facts(SHARED) is None  # unchecked: it may predate a write or a forget
