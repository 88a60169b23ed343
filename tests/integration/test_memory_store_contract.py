"""The memory ports' contract (MemoryStore, EntityMemory, UpkeepLedger, EmbeddingCache), run against
every adapter — in-process and Redis — including concurrent writers; plus the Redis client's failures.

The in-process adapters are also what the unit tests use (tests/doubles.py), so this suite is what
makes a unit test's memory behave like production's."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import pytest

from application.errors import MemoryUnavailable, UpkeepBusy
from application.memory.cached_embedder import CachedEmbedder
from application.memory.fold_archive import FoldArchive
from application.memory.short_term_memory import ShortTermMemory
from domain.agents.config import AgentConfig
from domain.conversations.conversation import Message, MessageStatus
from domain.conversations.messages import (
    ImageBlock,
    Msg,
    Role,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    text_msg,
)
from domain.ids import AppId, ConversationId, MessageId, OwnerId, TaskId
from domain.memory.archive import ArchiveEntry
from domain.memory.entities import ENTITY_HISTORY_LIMIT, Entity, EntityScope, EntitySheet, EntitySource
from domain.memory.summary import UpkeepState
from domain.memory.window import MemoryPolicy, history_from_turns, window_turn_ids
from infrastructure.errors import RedisUnreachable
from infrastructure.memory.codec import encode_window
from infrastructure.memory.inprocess_memory_store import InProcessEmbeddingCache, InProcessMemoryStore
from infrastructure.memory.redis_embedding_cache import RedisEmbeddingCache
from infrastructure.memory.redis_memory_store import RedisMemoryStore
from infrastructure.redis_client import URL_SETTING, RedisClient
from tests.doubles import FailingMemoryStore
from tests.fake_message_store import FakeMessageStore
from tests.fakes import FakeClock, FakeEmbedder, FakeSummarizer, WordTokenizer
from tests.integration.redis_fixtures import dead_redis_client, redis_client  # noqa: F401

if TYPE_CHECKING:
    from application.ports.memory_store import EmbeddingCache

pytestmark = pytest.mark.integration

CONV = ConversationId("conv-1")
NOW = datetime(2025, 5, 17, 9, 30, tzinfo=UTC)


Store = InProcessMemoryStore | RedisMemoryStore


@pytest.fixture(params=["inprocess", "inprocess-double", "redis"])
def store(request: pytest.FixtureRequest) -> Store:
    if request.param == "inprocess":
        return InProcessMemoryStore(lock_wait=0.2)
    if request.param == "inprocess-double":  # the unit tests' double, its failure switch off
        return FailingMemoryStore(lock_wait=0.2)
    return RedisMemoryStore(request.getfixturevalue("redis_client"), lock_wait=0.2, lock_lease=5)


def window() -> list[Msg]:
    rich = Msg(
        id="m2",
        name="assistant",
        role=Role.ASSISTANT,
        content=(
            TextBlock("Il fera beau à Paris ☀"),
            ImageBlock("https://example.test/sun.png"),
            ToolUseBlock("call-1", "weather", {"city": "Paris", "days": [1, 2]}),
            ToolResultBlock("call-1", "weather", "sunny", is_error=False),
        ),
        created_at=NOW,
        metadata={"model": "gpt-test", "nested": {"k": [1, 2.5]}},
        usage=Usage(prompt_tokens=12, completion_tokens=7, price=0.0013),
    )
    return [text_msg("m1", Role.USER, "Weather in Paris?", NOW), rich]


async def test_window_round_trips_with_every_block(store: Store) -> None:
    await store.restore_window(CONV, window())
    assert await store.get_window(CONV) == window()


async def test_window_miss_is_none(store: Store) -> None:
    assert await store.get_window(ConversationId("never-seen")) is None


async def test_saving_replaces_the_window(store: Store) -> None:
    """save_window is the port's only unconditional write, and nothing but this test calls it."""
    await store.save_window(CONV, window())
    await store.save_window(CONV, window()[:1])
    assert await store.get_window(CONV) == window()[:1]


async def test_empty_window_is_a_hit_not_a_miss(store: Store) -> None:
    await store.restore_window(CONV, [])
    assert await store.get_window(CONV) == []


async def test_forget_drops_the_window_of_that_conversation_only(store: Store) -> None:
    other = ConversationId("conv-2")
    await store.restore_window(CONV, window())
    await store.restore_window(other, window())
    await store.forget(CONV)
    assert await store.get_window(CONV) is None
    assert await store.get_window(other) == window()


async def test_forgetting_an_unknown_conversation_is_harmless(store: Store) -> None:
    await store.forget(ConversationId("never-seen"))


async def test_redis_window_expires_like_a_cache(redis_client: RedisClient) -> None:  # noqa: F811
    store = RedisMemoryStore(redis_client, window_ttl=60)
    await store.restore_window(CONV, window())
    ttl = await redis_client.commands.pttl(redis_client.key("window", CONV))
    assert 0 < ttl <= 60_000


async def test_unreadable_redis_window_is_a_miss(redis_client: RedisClient) -> None:  # noqa: F811
    await redis_client.commands.set(redis_client.key("window", CONV), "{not json")
    assert await RedisMemoryStore(redis_client).get_window(CONV) is None


async def test_redis_failure_raises_memory_unavailable() -> None:
    client = dead_redis_client()
    store = RedisMemoryStore(client)
    cache = RedisEmbeddingCache(client)
    try:
        calls = (
            lambda: store.get_window(CONV),
            lambda: store.save_window(CONV, window()),
            lambda: store.forget(CONV),
            lambda: store.append_to_window(CONV, turns(1)),
            lambda: store.restore_window(CONV, turns(1)),
            lambda: store.archive(CONV),
            lambda: store.fold_into_archive(CONV, archive_entry(1)),
            lambda: store.entity_sheet(CONV),
            lambda: store.record_entities(CONV, [entity("date", "friday")]),
            lambda: store.remove_entity(CONV, "date"),
            lambda: store.warm_entities(CONV, EntitySheet()),
            lambda: store.cached_entities(CONV),
            lambda: store.drop_entities(CONV),
            lambda: store.upkeep_state(CONV),
            lambda: store.save_upkeep_state(CONV, UpkeepState()),
            lambda: cache.cached_vectors(["k"]),
            lambda: cache.cache_vectors({"k": [1.0]}),
        )
        for call in calls:
            with pytest.raises(MemoryUnavailable) as caught:
                await call()
            assert caught.value.message == "The memory store is unavailable; try again shortly."
            assert "127.0.0.1" not in caught.value.message
    finally:
        await client.close()


async def test_the_double_fails_the_methods_it_is_told_to() -> None:
    store = FailingMemoryStore()
    await store.restore_window(CONV, turns(1))
    store.failing.add("entity_sheet")
    with pytest.raises(MemoryUnavailable):
        await store.entity_sheet(CONV)
    assert await store.get_window(CONV) == turns(1)
    store.fail = True
    for call in (lambda: store.get_window(CONV), lambda: store.archive(CONV), lambda: store.upkeep_state(CONV)):
        with pytest.raises(MemoryUnavailable):
            await call()
    with pytest.raises(MemoryUnavailable):
        async with store.exclusive(CONV):
            pass


async def test_ping_names_the_setting_and_hides_the_password() -> None:
    client = dead_redis_client()
    try:
        with pytest.raises(RedisUnreachable) as caught:
            await client.ping()
    finally:
        await client.close()
    message = str(caught.value)
    assert URL_SETTING in message
    assert "s3cret-pass" not in message
    assert "\n" not in message


async def test_building_a_client_does_no_io() -> None:
    client = dead_redis_client()
    RedisMemoryStore(client)
    await client.close()


async def test_redis_lock_failure_raises_memory_unavailable() -> None:
    client = dead_redis_client()
    try:
        with pytest.raises(MemoryUnavailable):
            async with RedisMemoryStore(client).exclusive(CONV):
                pass
    finally:
        await client.close()


# --- the short-term store: turns appended, the oldest folded into the archive -------------------


def turn(n: int) -> Message:
    at = NOW + timedelta(minutes=n)
    return Message(
        MessageId(f"m{n}"), CONV, OwnerId("alice"), TaskId(f"t{n}"), f"question {n}", at, at,
        answer=f"answer {n}", status=MessageStatus.NORMAL,
    )


def turns(*ns: int) -> list[Msg]:
    return history_from_turns([turn(n) for n in ns])


def archive_entry(*ns: int, summary: str = "they talked") -> ArchiveEntry:
    sources = tuple(MessageId(f"m{n}") for n in ns)
    return ArchiveEntry(ArchiveEntry.id_for(CONV, sources), CONV, summary, sources, NOW + timedelta(hours=ns[0]))


async def test_restoring_saves_a_rebuilt_store_only_when_none_exists(store: Store) -> None:
    assert await store.restore_window(CONV, turns(1)) == turns(1)
    assert await store.restore_window(CONV, turns(1, 2, 3)) == turns(1)  # an older rebuild loses
    assert await store.get_window(CONV) == turns(1)


async def test_concurrent_restores_agree(store: Store) -> None:
    restored = await asyncio.gather(*(store.restore_window(CONV, turns(*range(1, n + 1))) for n in range(1, 6)))
    assert all(r == restored[0] for r in restored)
    assert await store.get_window(CONV) == restored[0]


async def test_appending_to_a_missing_store_writes_nothing(store: Store) -> None:
    assert await store.append_to_window(CONV, turns(1)) is False
    assert await store.get_window(CONV) is None


async def test_a_turn_is_appended_once(store: Store) -> None:
    await store.restore_window(CONV, turns(1))
    assert await store.append_to_window(CONV, turns(2)) is True
    assert await store.append_to_window(CONV, turns(2)) is True
    assert await store.get_window(CONV) == turns(1, 2)


async def test_concurrent_appends_lose_nothing(store: Store) -> None:
    await store.restore_window(CONV, [])
    await asyncio.gather(*(store.append_to_window(CONV, turns(n)) for n in range(1, 21)))
    stored = await store.get_window(CONV)
    assert stored is not None
    assert sorted(window_turn_ids(stored)) == sorted(f"m{n}" for n in range(1, 21))


async def test_an_empty_archive_is_an_empty_list(store: Store) -> None:
    assert await store.archive(CONV) == []


async def test_folding_moves_the_oldest_turns_into_the_archive(store: Store) -> None:
    await store.restore_window(CONV, turns(1, 2, 3))
    entry = archive_entry(1, 2)
    assert await store.fold_into_archive(CONV, entry) is True
    assert await store.get_window(CONV) == turns(3)
    assert await store.archive(CONV) == [entry]


async def test_folding_twice_or_out_of_order_changes_nothing(store: Store) -> None:
    await store.restore_window(CONV, turns(1, 2, 3))
    assert await store.fold_into_archive(CONV, archive_entry(1)) is True
    assert await store.fold_into_archive(CONV, archive_entry(1)) is False  # already archived
    assert await store.fold_into_archive(CONV, archive_entry(3)) is False  # not the oldest
    assert await store.fold_into_archive(CONV, archive_entry(2, 1)) is False  # not in order
    assert await store.fold_into_archive(ConversationId("never-seen"), archive_entry(1)) is False  # no store
    assert await store.get_window(CONV) == turns(2, 3)
    assert [e.source_message_ids for e in await store.archive(CONV)] == [(MessageId("m1"),)]


async def test_concurrent_folds_archive_each_turn_exactly_once(store: Store) -> None:
    await store.restore_window(CONV, turns(*range(1, 9)))
    batches = [archive_entry(1, 2), archive_entry(3, 4), archive_entry(1, 2), archive_entry(3, 4)]
    # Whoever folds the second batch first loses (it is not the oldest yet); retry like the upkeep does.
    results = await asyncio.gather(*(store.fold_into_archive(CONV, e) for e in batches * 5))
    assert results.count(True) <= 2
    await store.fold_into_archive(CONV, archive_entry(3, 4))
    archived = [s for e in await store.archive(CONV) for s in e.source_message_ids]
    assert archived == ["m1", "m2", "m3", "m4"]
    assert await store.get_window(CONV) == turns(5, 6, 7, 8)


async def test_a_fold_and_an_append_at_once_keep_both(store: Store) -> None:
    await store.restore_window(CONV, turns(1, 2, 3))
    await asyncio.gather(store.fold_into_archive(CONV, archive_entry(1)), store.append_to_window(CONV, turns(4)))
    assert await store.get_window(CONV) == turns(2, 3, 4)
    assert len(await store.archive(CONV)) == 1


async def test_archive_entries_come_back_oldest_first(store: Store) -> None:
    await store.restore_window(CONV, turns(1, 2, 3))
    second, first = archive_entry(2, 3), archive_entry(1)
    await store.fold_into_archive(CONV, first)
    await store.fold_into_archive(CONV, second)
    assert await store.archive(CONV) == [first, second]


async def test_concurrent_upkeep_compactions_archive_each_turn_once_and_skip_none(store: Store) -> None:
    """The use case over the real adapter: four upkeeps fold the same over-full store at once."""
    record = FakeMessageStore()
    for n in range(1, 12):
        record.messages[f"m{n}"] = turn(n)
    await store.restore_window(CONV, turns(*range(1, 12)))  # eleven turns, none archived yet
    policy = MemoryPolicy(compact_threshold=4, compact_batch=2)
    short_term = ShortTermMemory(record, store, WordTokenizer(), policy)
    summarizer = FakeSummarizer()
    fold = FoldArchive(short_term, store, lambda _: summarizer, FakeClock(), policy)
    config = AgentConfig(AppId("default"))
    await asyncio.gather(*(fold(config, CONV) for _ in range(4)))
    archived = [s for e in await store.archive(CONV) for s in e.source_message_ids]
    stored = await store.get_window(CONV)
    assert stored is not None
    kept = window_turn_ids(stored)
    assert sorted(archived + kept, key=lambda m: int(m[1:])) == [f"m{n}" for n in range(1, 12)]
    assert len(set(archived)) == len(archived)
    assert kept == ["m9", "m10", "m11"]


# --- entities ---------------------------------------------------------------------------------


def entity(kind: str, value: str, confidence: float = 0.9, minute: int = 0, source: str = "m1") -> Entity:
    return Entity(kind, value, confidence, MessageId(source), NOW + timedelta(minutes=minute))


async def test_no_entities_is_an_empty_sheet(store: Store) -> None:
    sheet = await store.entity_sheet(CONV)
    assert (sheet.current, sheet.history) == ((), ())


async def test_entities_round_trip(store: Store) -> None:
    date, city = entity("date", "tomorrow", 0.85), entity("city", "Zürich ☀", 1.0, source="")
    await store.record_entities(CONV, [date, city])
    sheet = await store.entity_sheet(CONV)
    assert sorted(sheet.current, key=lambda e: e.type) == [city, date]


async def test_a_new_value_replaces_the_old_which_becomes_history(store: Store) -> None:
    await store.record_entities(CONV, [entity("date", "tomorrow", minute=1)])
    await store.record_entities(CONV, [entity("date", "the day after tomorrow", minute=5, source="m2")])
    sheet = await store.entity_sheet(CONV)
    assert [e.value for e in sheet.current] == ["the day after tomorrow"]
    assert sheet.history == (entity("date", "tomorrow", minute=1).superseded(NOW + timedelta(minutes=5)),)


async def test_a_late_value_goes_to_history_and_an_uncertain_one_does_not_displace(store: Store) -> None:
    await store.record_entities(CONV, [entity("date", "friday", minute=5)])
    await store.record_entities(CONV, [entity("date", "monday", minute=2)], min_confidence=0.7)
    await store.record_entities(CONV, [entity("date", "today", 0.6, minute=9)], min_confidence=0.7)
    sheet = await store.entity_sheet(CONV)
    assert [e.value for e in sheet.current] == ["friday"]
    assert [e.value for e in sheet.history] == ["monday", "today"]


async def test_concurrent_entity_writers_lose_nothing(store: Store) -> None:
    writes = [store.record_entities(CONV, [entity(f"t{n}", f"v{n}")]) for n in range(15)]
    writes += [store.record_entities(CONV, [entity("date", f"day {n}", minute=n)]) for n in range(15)]
    await asyncio.gather(*writes)
    sheet = await store.entity_sheet(CONV)
    assert {e.type for e in sheet.current} == {"date", *(f"t{n}" for n in range(15))}
    assert next(e for e in sheet.current if e.type == "date").value == "day 14"
    assert sorted(e.value for e in sheet.history) == sorted(f"day {n}" for n in range(14))


async def test_history_is_capped(store: Store) -> None:
    for n in range(ENTITY_HISTORY_LIMIT + 5):
        await store.record_entities(CONV, [entity("date", f"day {n}", minute=n)])
    history = (await store.entity_sheet(CONV)).history
    assert len(history) == ENTITY_HISTORY_LIMIT
    assert history[0].value == "day 4"


async def test_removing_an_entity_drops_its_value_and_history_only(store: Store) -> None:
    await store.record_entities(CONV, [entity("date", "a", minute=1), entity("city", "Porto")])
    await store.record_entities(CONV, [entity("date", "b", minute=2), entity("city", "Lyon", minute=2)])
    assert await store.remove_entity(CONV, "date") is True
    assert await store.remove_entity(CONV, "date") is False
    sheet = await store.entity_sheet(CONV)
    assert [e.value for e in sheet.current] == ["Lyon"]
    assert [e.value for e in sheet.history] == ["Porto"]


async def test_warming_replaces_the_cached_entities_current_and_history_with_the_records(store: Store) -> None:
    other = ConversationId("conv-2")
    for conversation in (CONV, other):
        await store.record_entities(conversation, [entity("date", "a", minute=1), entity("city", "Porto")])
        await store.record_entities(conversation, [entity("date", "b", minute=2)])
    size = replace(entity("size", "M", minute=3), scope=EntityScope.USER, explicit=False, source_conversation_id=other)
    set_by_hand = replace(entity("diet", "vegan", source=""), source=EntitySource.API)
    old = entity("size", "S", minute=1).superseded(NOW + timedelta(minutes=3))
    await store.warm_entities(CONV, EntitySheet((size, set_by_hand), (old,)))
    sheet = await store.entity_sheet(CONV)
    assert (sorted(sheet.current, key=lambda e: e.type), sheet.history) == ([set_by_hand, size], (old,))
    assert {e.value for e in (await store.entity_sheet(other)).current} == {"b", "Porto"}
    await store.warm_entities(CONV, EntitySheet())
    assert await store.entity_sheet(CONV) == EntitySheet()
    assert len((await store.entity_sheet(other)).history) == 1


async def test_a_cache_holds_a_copy_of_entities_only_once_warmed_an_empty_one_too(store: Store) -> None:
    other = ConversationId("conv-2")
    await store.record_entities(CONV, [entity("city", "Porto")])  # its own merge is no copy of the record
    assert await store.cached_entities(CONV) is None
    await store.warm_entities(CONV, EntitySheet())
    assert await store.cached_entities(CONV) == EntitySheet()
    assert await store.cached_entities(other) is None
    await store.warm_entities(other, EntitySheet((entity("city", "Lyon"),)))
    assert [e.value for e in (await store.cached_entities(other) or EntitySheet()).current] == ["Lyon"]
    await store.drop_entities(other)
    assert (await store.cached_entities(other), await store.entity_sheet(other)) == (None, EntitySheet())
    assert await store.cached_entities(CONV) == EntitySheet()
    await store.forget(CONV)
    assert await store.cached_entities(CONV) is None


async def test_redis_lets_a_warmed_copy_of_entities_lapse_like_a_window(redis_client: RedisClient) -> None:  # noqa: F811
    store = RedisMemoryStore(redis_client, window_ttl=0.05)
    await store.warm_entities(CONV, EntitySheet())
    assert await store.cached_entities(CONV) == EntitySheet()
    await asyncio.sleep(0.1)
    assert await store.cached_entities(CONV) is None


async def test_warming_keeps_the_newest_history_up_to_the_cap(store: Store) -> None:
    history = tuple(entity("date", f"day {n}", minute=n).superseded(NOW + timedelta(minutes=n + 1))
                    for n in range(ENTITY_HISTORY_LIMIT + 5))
    await store.warm_entities(CONV, EntitySheet((entity("date", "today", minute=999),), history))
    sheet = await store.entity_sheet(CONV)
    assert sheet.history == history[5:]
    assert [e.value for e in sheet.current] == ["today"]


async def test_redis_keeps_entities_in_a_hash_by_type(redis_client: RedisClient) -> None:  # noqa: F811
    store = RedisMemoryStore(redis_client)
    await store.record_entities(CONV, [entity("date", "tomorrow", 0.85, source="m7")])
    raw = await redis_client.commands.hgetall(redis_client.key("entity", CONV))
    assert list(raw) == ["date"]
    assert json.loads(raw["date"]) == {
        "type": "date", "value": "tomorrow", "confidence": 0.85, "source_message_id": "m7",
        "updated_at": NOW.isoformat(), "superseded_at": None, "scope": "conversation", "source": "extracted",
        "explicit": True, "source_conversation_id": None,
    }


async def test_an_unreadable_redis_entity_or_entry_is_skipped(redis_client: RedisClient) -> None:  # noqa: F811
    store = RedisMemoryStore(redis_client)
    await store.record_entities(CONV, [entity("city", "Porto")])
    await redis_client.commands.hset(redis_client.key("entity", CONV), "date", "{broken")
    await redis_client.commands.hset(redis_client.key("archive", CONV), "x", '{"id": 1}')
    assert [e.type for e in (await store.entity_sheet(CONV)).current] == ["city"]
    assert await store.archive(CONV) == []
    await store.record_entities(CONV, [entity("date", "friday", minute=1)])  # a broken value is replaced
    assert {e.type for e in (await store.entity_sheet(CONV)).current} == {"city", "date"}


# --- upkeep state and lock --------------------------------------------------------------------


async def test_upkeep_state_round_trips(store: Store) -> None:
    assert await store.upkeep_state(CONV) == UpkeepState()
    state = UpkeepState(MessageId("m9"), NOW)
    await store.save_upkeep_state(CONV, state)
    assert await store.upkeep_state(CONV) == state


async def test_one_upkeep_at_a_time_per_conversation(store: Store) -> None:
    inside, most = 0, 0

    async def hold(conversation: ConversationId) -> None:
        nonlocal inside, most
        async with store.exclusive(conversation):
            inside += 1
            most = max(most, inside)
            await asyncio.sleep(0.01)
            inside -= 1

    await asyncio.gather(*(hold(CONV) for _ in range(5)))
    assert most == 1
    other = ConversationId("conv-2")
    async with store.exclusive(CONV), store.exclusive(other):
        pass  # two conversations do not wait for each other


async def test_a_lock_held_too_long_makes_the_next_upkeep_give_up(store: Store) -> None:
    async with store.exclusive(CONV):
        with pytest.raises(UpkeepBusy):
            async with store.exclusive(CONV):
                pass
    async with store.exclusive(CONV):
        pass  # released


async def test_a_lock_is_released_when_its_holder_fails(store: Store) -> None:
    with pytest.raises(RuntimeError):
        async with store.exclusive(CONV):
            raise RuntimeError("upkeep failed")
    async with store.exclusive(CONV):
        pass


async def test_the_redis_lock_holds_across_processes(redis_client: RedisClient) -> None:  # noqa: F811
    one, two = RedisMemoryStore(redis_client, lock_wait=0.1), RedisMemoryStore(redis_client, lock_wait=0.1)
    async with one.exclusive(CONV):
        with pytest.raises(UpkeepBusy):
            async with two.exclusive(CONV):
                pass


async def test_a_redis_lock_whose_holder_died_lapses_after_its_lease(redis_client: RedisClient) -> None:  # noqa: F811
    await redis_client.commands.set(redis_client.key("upkeep_lock", CONV), "a dead worker's token", px=100)
    async with RedisMemoryStore(redis_client, lock_wait=2).exclusive(CONV):
        pass


# --- forgetting -------------------------------------------------------------------------------


async def test_forget_drops_every_tier_of_that_conversation_only(store: Store) -> None:
    other = ConversationId("conv-2")
    for conversation in (CONV, other):
        await store.restore_window(conversation, turns(1, 2))
        await store.record_entities(conversation, [entity("date", "a"), entity("date", "b", minute=1)])
        await store.save_upkeep_state(conversation, UpkeepState(MessageId("m1")))
    await store.fold_into_archive(CONV, archive_entry(1))
    await store.forget(CONV)
    assert await store.get_window(CONV) is None
    assert await store.archive(CONV) == []
    sheet = await store.entity_sheet(CONV)
    assert (sheet.current, sheet.history) == ((), ())
    assert await store.upkeep_state(CONV) == UpkeepState()
    assert await store.get_window(other) == turns(1, 2)
    assert len((await store.entity_sheet(other)).history) == 1


async def test_redis_forget_leaves_no_key_of_the_conversation(redis_client: RedisClient) -> None:  # noqa: F811
    store = RedisMemoryStore(redis_client)
    await store.restore_window(CONV, turns(1, 2))
    await store.fold_into_archive(CONV, archive_entry(1))
    await store.record_entities(CONV, [entity("date", "a"), entity("date", "b", minute=1)])
    await store.save_upkeep_state(CONV, UpkeepState(MessageId("m1")))
    async with store.exclusive(CONV):
        await store.forget(CONV)
    keys = [k async for k in redis_client.commands.scan_iter(match=f"{redis_client.prefix}*{CONV}")]
    assert keys == []


# --- the embedding cache ----------------------------------------------------------------------


@pytest.fixture(params=["inprocess", "redis"])
def cache(request: pytest.FixtureRequest) -> EmbeddingCache:
    if request.param == "inprocess":
        return InProcessEmbeddingCache()
    return RedisEmbeddingCache(request.getfixturevalue("redis_client"))


async def test_cached_vectors_round_trip_and_a_miss_is_none(cache: EmbeddingCache) -> None:
    assert await cache.cached_vectors([]) == []
    await cache.cache_vectors({"a": [0.5, -1.25, 3e-07], "b": [1.0]})
    assert await cache.cached_vectors(["a", "missing", "b"]) == [[0.5, -1.25, 3e-07], None, [1.0]]


async def test_the_cached_embedder_embeds_a_text_once(cache: EmbeddingCache) -> None:
    inner = FakeEmbedder()
    embedder = CachedEmbedder(inner, cache)
    first = await embedder.embed(["alpha", "beta", "alpha"])
    again = await embedder.embed(["beta", "alpha"])
    assert inner.embedded == ["alpha", "beta"]
    assert first == [again[1], again[0], again[1]]


async def test_redis_embeddings_expire(redis_client: RedisClient) -> None:  # noqa: F811
    await RedisEmbeddingCache(redis_client, ttl=60).cache_vectors({"k": [1.0]})
    assert 0 < await redis_client.commands.pttl(redis_client.key("embedding", "k")) <= 60_000


async def test_the_inprocess_cache_is_bounded_and_expires() -> None:
    small = InProcessEmbeddingCache(max_entries=2)
    await small.cache_vectors({"a": [1.0], "b": [2.0]})
    await small.cached_vectors(["a"])  # a is used: b is the least recent
    await small.cache_vectors({"c": [3.0]})
    assert await small.cached_vectors(["a", "b", "c"]) == [[1.0], None, [3.0]]
    time = FakeClock(step=0)
    brief = InProcessEmbeddingCache(ttl=10, clock=time.monotonic)
    await brief.cache_vectors({"a": [1.0]})
    time.advance(10)
    assert await brief.cached_vectors(["a"]) == [[1.0]]  # expires after its ttl, not at it
    time.advance(0.01)
    assert await brief.cached_vectors(["a"]) == [None]





async def test_appending_to_an_unreadable_window_leaves_it_to_be_rebuilt(
    redis_client: RedisClient,  # noqa: F811
) -> None:
    store = RedisMemoryStore(redis_client)
    await redis_client.commands.set(redis_client.key("window", CONV), "{not json")
    assert await store.append_to_window(CONV, turns(1)) is False
    assert await store.get_window(CONV) is None  # a miss: rebuilt from the record


async def test_a_window_appended_in_redis_is_the_text_of_the_longer_list(redis_client: RedisClient) -> None:  # noqa: F811
    store = RedisMemoryStore(redis_client)
    await store.restore_window(CONV, window())  # non-ASCII text, nested metadata, tool blocks
    assert await store.append_to_window(CONV, turns(2)) is True
    raw = await redis_client.commands.get(redis_client.key("window", CONV))
    assert raw == encode_window([*window(), *turns(2)])
    assert await store.get_window(CONV) == [*window(), *turns(2)]
