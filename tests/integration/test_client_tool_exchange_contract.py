"""The ClientToolExchange contract, run against every adapter."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

from application.errors import EventStoreUnavailable
from application.ports.client_tool_exchange import ClientToolExchange, PausedTurn
from application.ports.task_control import TaskInfo
from domain.ids import AppId, ConversationId, EndUserId, MessageId, OwnerId, TaskId
from domain.tools.client_tools import ChoiceMode, ClientToolResult, Resumption, ToolChoice
from infrastructure.events.inprocess_client_tool_exchange import InProcessClientToolExchange
from infrastructure.events.redis_client_tool_exchange import RedisClientToolExchange
from tests.integration.redis_fixtures import dead_redis_client, redis_client  # noqa: F401

pytestmark = pytest.mark.integration

ALICE, BOB = OwnerId("alice"), OwnerId("bob")
TASK = TaskId("task-1")
INFO = TaskInfo(TASK, ALICE, ConversationId("conv-1"), MessageId("msg-1"), EndUserId("u1"), AppId("agent-1"))
PAUSED = PausedTurn(INFO, ("call_a", "call_b"))
RESULTS = Resumption(
    (ClientToolResult("call_a", "sunny"), ClientToolResult("call_b", "雨")), ToolChoice(ChoiceMode.NAMED, "get_weather")
)


@pytest.fixture(params=["inprocess", "redis"])
def exchange(request: pytest.FixtureRequest) -> ClientToolExchange:
    if request.param == "inprocess":
        return InProcessClientToolExchange()
    return RedisClientToolExchange(request.getfixturevalue("redis_client"))


async def test_a_paused_turn_is_found_by_each_of_its_calls_for_its_owner_only(exchange: ClientToolExchange) -> None:
    await exchange.pause(PAUSED, ttl=60)
    assert await exchange.find(ALICE, "call_a") == (PAUSED,)
    assert await exchange.find(ALICE, "call_b") == (PAUSED,)
    assert await exchange.find(BOB, "call_a") == ()
    assert await exchange.find(ALICE, "call_c") == ()


async def test_turns_waiting_for_one_call_id_are_each_found_and_resumed_apart(exchange: ClientToolExchange) -> None:
    # Identical requests under the legacy `functions` API pause with one id (legacy_call_id).
    other = PausedTurn(replace(INFO, task_id=TaskId("task-2"), conversation_id=ConversationId("conv-2")), ("call_a",))
    await exchange.pause(PAUSED, ttl=60)
    await exchange.pause(other, ttl=60)
    assert sorted(p.task.task_id for p in await exchange.find(ALICE, "call_a")) == ["task-1", "task-2"]
    assert await exchange.deliver(other, RESULTS)
    assert await exchange.collect(other, wait=1) == RESULTS
    await exchange.end(other)
    assert await exchange.find(ALICE, "call_a") == (PAUSED,)
    assert await exchange.collect(PAUSED, wait=0.1) is None


async def test_delivered_results_reach_the_waiting_turn_once(exchange: ClientToolExchange) -> None:
    await exchange.pause(PAUSED, ttl=60)
    waiting = asyncio.create_task(exchange.collect(PAUSED, wait=5))
    await asyncio.sleep(0.05)
    assert await exchange.deliver(PAUSED, RESULTS) is True
    assert await waiting == RESULTS
    assert await exchange.deliver(PAUSED, RESULTS) is False  # a second resume finds no pause


async def test_results_delivered_before_the_turn_waits_are_kept_for_it(exchange: ClientToolExchange) -> None:
    await exchange.pause(PAUSED, ttl=60)
    assert await exchange.deliver(PAUSED, RESULTS)
    assert await exchange.collect(PAUSED, wait=1) == RESULTS


async def test_a_wait_without_results_ends_empty(exchange: ClientToolExchange) -> None:
    await exchange.pause(PAUSED, ttl=60)
    assert await exchange.collect(PAUSED, wait=0.2) is None


async def test_results_for_an_earlier_pause_never_reach_the_turns_next_one(exchange: ClientToolExchange) -> None:
    await exchange.pause(PAUSED, ttl=60)
    assert await exchange.deliver(PAUSED, RESULTS)
    assert await exchange.collect(PAUSED, wait=1) == RESULTS
    await exchange.end(PAUSED)
    again = PausedTurn(INFO, ("call_c",))  # the same turn, paused again
    await exchange.pause(again, ttl=60)
    assert await exchange.deliver(PAUSED, RESULTS) is False  # a late or repeated resume of the first pause
    assert await exchange.collect(again, wait=0.2) is None


async def test_an_ended_pause_is_neither_found_nor_resumed(exchange: ClientToolExchange) -> None:
    await exchange.pause(PAUSED, ttl=60)
    await exchange.end(PAUSED)
    await exchange.end(PAUSED)  # ending twice is no failure
    assert await exchange.find(ALICE, "call_a") == ()
    assert await exchange.deliver(PAUSED, RESULTS) is False


async def test_a_pause_lapses_after_its_ttl(exchange: ClientToolExchange) -> None:
    await exchange.pause(PAUSED, ttl=0.2)
    await asyncio.sleep(0.4)
    assert await exchange.find(ALICE, "call_a") == ()
    assert await exchange.deliver(PAUSED, RESULTS) is False


async def test_redis_failure_raises_event_store_unavailable() -> None:
    client = dead_redis_client()
    exchange = RedisClientToolExchange(client)
    try:
        calls = (
            lambda: exchange.pause(PAUSED, ttl=60),
            lambda: exchange.find(ALICE, "call_a"),
            lambda: exchange.deliver(PAUSED, RESULTS),
            lambda: exchange.collect(PAUSED, wait=0.1),
            lambda: exchange.end(PAUSED),
        )
        for call in calls:
            with pytest.raises(EventStoreUnavailable):
                await call()
    finally:
        await client.close()
