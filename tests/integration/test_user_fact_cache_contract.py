"""`UserFactCache`: the in-process and Redis copies of end users' facts pass one suite; Redis's
lapse, unreadable entries, keys and failures on top."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import pytest

from application.errors import MemoryUnavailable
from domain.ids import AppId, EndUserId, OwnerId
from domain.memory.entities import EntityScope, EntitySheet
from domain.memory.user_facts import FactHolder
from infrastructure.memory.inprocess_memory_store import InProcessUserFactCache
from infrastructure.memory.redis_user_fact_cache import RedisUserFactCache
from tests.integration.memory_record_fixtures import entity
from tests.integration.redis_fixtures import dead_redis_client, redis_client  # noqa: F401

if TYPE_CHECKING:
    from application.ports.memory_store import UserFactCache
    from infrastructure.redis_client import RedisClient

pytestmark = pytest.mark.integration

ALICE, ANN = OwnerId("alice"), EndUserId("ann")
SHARED, HELPERS = FactHolder(ALICE, ANN), FactHolder(ALICE, ANN, AppId("helper"))


def sheet(*values: str, history: tuple[str, ...] = ()) -> EntitySheet:
    current = tuple(entity(f"t{n}", value, scope=EntityScope.USER) for n, value in enumerate(values))
    old = tuple(entity("t0", value, minute=n).superseded(entity("t0", "x", minute=n + 1).updated_at)
                for n, value in enumerate(history))
    return EntitySheet(current, old)


@pytest.fixture(params=["inprocess", "redis"])
def cache(request: pytest.FixtureRequest) -> UserFactCache:
    if request.param == "inprocess":
        return InProcessUserFactCache()
    return RedisUserFactCache(request.getfixturevalue("redis_client"))


async def test_nothing_is_held_until_warmed_and_an_empty_sheet_is_held_too(cache: UserFactCache) -> None:
    assert await cache.cached_user_facts(SHARED) is None
    await cache.warm_user_facts(SHARED, EntitySheet())
    assert await cache.cached_user_facts(SHARED) == EntitySheet()
    assert await cache.cached_user_facts(HELPERS) is None


async def test_each_holder_keeps_its_own_whole_sheet(cache: UserFactCache) -> None:
    long_history = tuple(f"v{n}" for n in range(40))
    await cache.warm_user_facts(SHARED, sheet("Ann", history=long_history))
    await cache.warm_user_facts(HELPERS, sheet("Annie"))
    assert await cache.cached_user_facts(SHARED) == sheet("Ann", history=long_history)
    assert await cache.cached_user_facts(HELPERS) == sheet("Annie")


async def test_dropping_an_end_users_facts_drops_every_holder_of_theirs_only(cache: UserFactCache) -> None:
    bens, bobs = FactHolder(ALICE, EndUserId("ben")), FactHolder(OwnerId("bob"), ANN)
    for holder in (SHARED, HELPERS, bens, bobs):
        await cache.warm_user_facts(holder, sheet(holder.end_user))
    await cache.drop_user_facts(ALICE, ANN)
    assert (await cache.cached_user_facts(SHARED), await cache.cached_user_facts(HELPERS)) == (None, None)
    assert await cache.cached_user_facts(bens) == sheet("ben")
    assert await cache.cached_user_facts(bobs) == sheet("ann")


async def test_owner_and_end_user_never_read_as_another_pair(cache: UserFactCache) -> None:
    await cache.warm_user_facts(FactHolder(OwnerId("a:b"), EndUserId("c")), sheet("one"))
    assert await cache.cached_user_facts(FactHolder(OwnerId("a"), EndUserId("b:c"))) is None


async def test_redis_lets_a_copy_lapse(redis_client: RedisClient) -> None:  # noqa: F811
    cache = RedisUserFactCache(redis_client, ttl=0.05)
    await cache.warm_user_facts(SHARED, sheet("Ann"))
    assert await cache.cached_user_facts(SHARED) == sheet("Ann")
    await asyncio.sleep(0.1)
    assert await cache.cached_user_facts(SHARED) is None


async def test_an_unreadable_redis_copy_is_a_miss(redis_client: RedisClient) -> None:  # noqa: F811
    cache = RedisUserFactCache(redis_client)
    await cache.warm_user_facts(SHARED, sheet("Ann"))
    [key] = [k async for k in redis_client.commands.scan_iter(match=f"{redis_client.prefix}user_facts:*")]
    await redis_client.commands.hset(key, "", "{not json")
    assert await cache.cached_user_facts(SHARED) is None


async def test_an_unreachable_redis_raises_memory_unavailable_naming_no_host() -> None:
    client = dead_redis_client()
    cache = RedisUserFactCache(client)
    try:
        for call in (lambda: cache.cached_user_facts(SHARED), lambda: cache.warm_user_facts(SHARED, EntitySheet()),
                     lambda: cache.drop_user_facts(ALICE, ANN)):
            with pytest.raises(MemoryUnavailable) as caught:
                await call()
            assert "127.0.0.1" not in caught.value.message
    finally:
        await client.close()


async def test_in_process_copies_lapse_after_their_ttl_and_the_least_recent_user_goes_first() -> None:
    now = [0.0]
    cache = InProcessUserFactCache(ttl=60.0, max_users=2, clock=lambda: now[0])
    ben, cy = FactHolder(ALICE, EndUserId("ben")), FactHolder(ALICE, EndUserId("cy"))
    await cache.warm_user_facts(SHARED, sheet("Ann"))
    now[0] = 59.0
    assert await cache.cached_user_facts(SHARED) == sheet("Ann")  # and now the most recently used
    await cache.warm_user_facts(ben, sheet("Ben"))
    await cache.warm_user_facts(cy, sheet("Cy"))  # a third user: the least recently used (Ann) goes
    assert (await cache.cached_user_facts(SHARED), await cache.cached_user_facts(cy)) == (None, sheet("Cy"))
    now[0] = 119.5  # 60.5 s after Ben's warming
    assert await cache.cached_user_facts(ben) is None
