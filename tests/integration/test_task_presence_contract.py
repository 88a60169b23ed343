"""The TaskPresence contract, run against every adapter."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import pytest

from application.errors import EventStoreUnavailable
from domain.ids import TaskId
from infrastructure.events.inprocess_task_presence import InProcessTaskPresence
from infrastructure.events.redis_task_presence import RedisTaskPresence
from tests.fakes import FakeClock
from tests.integration.redis_fixtures import dead_redis_client, redis_client  # noqa: F401

if TYPE_CHECKING:
    from application.ports.task_presence import TaskPresence

pytestmark = pytest.mark.integration

TASK, OTHER = TaskId("task-1"), TaskId("task-2")


@pytest.fixture(params=["inprocess", "redis"])
def presence(request: pytest.FixtureRequest) -> TaskPresence:
    if request.param == "inprocess":
        return InProcessTaskPresence()
    return RedisTaskPresence(request.getfixturevalue("redis_client"))


async def test_nobody_is_present_for_an_unknown_task(presence: TaskPresence) -> None:
    assert not await presence.worker_alive(TASK)
    assert not await presence.client_attached(TASK)


async def test_a_worker_beat_holds_until_its_lease_lapses(presence: TaskPresence) -> None:
    await presence.worker_beat(TASK, 0.2)
    assert await presence.worker_alive(TASK)
    assert not await presence.worker_alive(OTHER)
    await asyncio.sleep(0.3)
    assert not await presence.worker_alive(TASK)


async def test_a_client_beat_renews_the_lease(presence: TaskPresence) -> None:
    await presence.client_beat(TASK, 0.3)
    await asyncio.sleep(0.2)
    await presence.client_beat(TASK, 0.3)
    await asyncio.sleep(0.2)
    assert await presence.client_attached(TASK)
    await asyncio.sleep(0.2)
    assert not await presence.client_attached(TASK)


async def test_worker_and_client_leases_are_separate(presence: TaskPresence) -> None:
    await presence.client_beat(TASK, 5)
    assert not await presence.worker_alive(TASK)
    await presence.worker_beat(OTHER, 5)
    assert not await presence.client_attached(OTHER)


async def test_inprocess_leases_run_on_its_clock() -> None:
    time = FakeClock(step=0)
    presence = InProcessTaskPresence(clock=time.monotonic)
    await presence.worker_beat(TASK, 15)
    await presence.client_beat(TASK, 30)
    time.advance(15)
    assert await presence.worker_alive(TASK)  # a lease lapses after its ttl, not at it
    time.advance(0.5)
    assert not await presence.worker_alive(TASK)
    assert await presence.client_attached(TASK)
    await presence.client_beat(TASK, 30)  # renewed
    time.advance(30)
    assert await presence.client_attached(TASK)
    time.advance(0.5)
    assert not await presence.client_attached(TASK)


async def test_redis_failure_raises_event_log_unavailable() -> None:
    presence = RedisTaskPresence(dead_redis_client())
    with pytest.raises(EventStoreUnavailable):
        await presence.worker_beat(TASK, 1)
    with pytest.raises(EventStoreUnavailable):
        await presence.client_attached(TASK)
