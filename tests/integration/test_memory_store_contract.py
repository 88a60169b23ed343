"""The MemoryStore contract, run against every adapter; plus the Redis client's failures."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from application.errors import MemoryUnavailable
from application.ports.memory_store import MemoryStore
from domain.ids import ConversationId
from domain.messages import ImageBlock, Msg, Role, TextBlock, ToolResultBlock, ToolUseBlock, Usage, text_msg
from infrastructure.memory.inprocess_memory_store import InProcessMemoryStore
from infrastructure.memory.redis_memory_store import RedisMemoryStore
from infrastructure.redis_client import URL_SETTING, RedisClient, RedisUnreachable
from tests.integration.redis_fixtures import dead_redis_client, redis_client  # noqa: F401

pytestmark = pytest.mark.integration

CONV = ConversationId("conv-1")
NOW = datetime(2025, 5, 17, 9, 30, tzinfo=UTC)


@pytest.fixture(params=["inprocess", "redis"])
def store(request: pytest.FixtureRequest) -> MemoryStore:
    if request.param == "inprocess":
        return InProcessMemoryStore()
    return RedisMemoryStore(request.getfixturevalue("redis_client"))


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


async def test_window_round_trips_with_every_block(store: MemoryStore) -> None:
    await store.save_window(CONV, window())
    assert await store.get_window(CONV) == window()


async def test_window_miss_is_none(store: MemoryStore) -> None:
    assert await store.get_window(ConversationId("never-seen")) is None


async def test_saving_replaces_the_window(store: MemoryStore) -> None:
    await store.save_window(CONV, window())
    await store.save_window(CONV, window()[:1])
    assert await store.get_window(CONV) == window()[:1]


async def test_empty_window_is_a_hit_not_a_miss(store: MemoryStore) -> None:
    await store.save_window(CONV, [])
    assert await store.get_window(CONV) == []


async def test_forget_drops_the_window_of_that_conversation_only(store: MemoryStore) -> None:
    other = ConversationId("conv-2")
    await store.save_window(CONV, window())
    await store.save_window(other, window())
    await store.forget(CONV)
    assert await store.get_window(CONV) is None
    assert await store.get_window(other) == window()


async def test_forgetting_an_unknown_conversation_is_harmless(store: MemoryStore) -> None:
    await store.forget(ConversationId("never-seen"))


async def test_redis_window_expires_like_a_cache(redis_client: RedisClient) -> None:  # noqa: F811
    store = RedisMemoryStore(redis_client, window_ttl=60)
    await store.save_window(CONV, window())
    ttl = await redis_client.commands.pttl(redis_client.key("window", CONV))
    assert 0 < ttl <= 60_000


async def test_unreadable_redis_window_is_a_miss(redis_client: RedisClient) -> None:  # noqa: F811
    await redis_client.commands.set(redis_client.key("window", CONV), "{not json")
    assert await RedisMemoryStore(redis_client).get_window(CONV) is None


async def test_redis_failure_raises_memory_unavailable() -> None:
    client = dead_redis_client()
    store = RedisMemoryStore(client)
    try:
        calls = (
            lambda: store.get_window(CONV),
            lambda: store.save_window(CONV, window()),
            lambda: store.forget(CONV),
        )
        for call in calls:
            with pytest.raises(MemoryUnavailable) as caught:
                await call()
            assert "127.0.0.1:1" in caught.value.message
            assert "s3cret-pass" not in caught.value.message
    finally:
        await client.close()


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
