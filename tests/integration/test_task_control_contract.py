"""The TaskControl contract, run against every adapter."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import pytest

from application.errors import EventStoreUnavailable
from application.ports.task_control import TaskControl, TaskInfo
from domain.ids import ConversationId, MessageId, OwnerId, TaskId
from infrastructure.events.inprocess_task_control import InProcessTaskControl
from infrastructure.events.redis_task_control import RedisTaskControl
from tests.fakes import FakeClock
from tests.integration.redis_fixtures import dead_redis_client, redis_client  # noqa: F401

if TYPE_CHECKING:
    from infrastructure.redis_client import RedisClient

pytestmark = pytest.mark.integration

TASK = TaskId("task-1")
ALICE = OwnerId("alice")
MALLORY = OwnerId("mallory")
INFO = TaskInfo(TASK, ALICE, ConversationId("conv-1"), MessageId("msg-1"))


@pytest.fixture(params=["inprocess", "redis"])
def control(request: pytest.FixtureRequest) -> TaskControl:
    if request.param == "inprocess":
        return InProcessTaskControl()
    return RedisTaskControl(request.getfixturevalue("redis_client"))


async def test_registered_task_can_be_read_back(control: TaskControl) -> None:
    await control.register(INFO, ttl=60)
    assert await control.get(TASK) == INFO


async def test_unknown_task_is_none(control: TaskControl) -> None:
    assert await control.get(TaskId("never-seen")) is None


async def test_stop_by_the_owner_succeeds_and_is_seen(control: TaskControl) -> None:
    await control.register(INFO, ttl=60)
    assert not await control.stop_requested(TASK)
    assert await control.request_stop(TASK, ALICE) is True
    assert await control.stop_requested(TASK)


async def test_stop_by_another_owner_is_refused_and_not_seen(control: TaskControl) -> None:
    await control.register(INFO, ttl=60)
    assert await control.request_stop(TASK, MALLORY) is False
    assert not await control.stop_requested(TASK)


async def test_stop_of_an_unknown_task_is_refused(control: TaskControl) -> None:
    assert await control.request_stop(TaskId("never-seen"), ALICE) is False
    assert not await control.stop_requested(TaskId("never-seen"))


async def test_stop_of_one_task_does_not_stop_another(control: TaskControl) -> None:
    other = TaskInfo(TaskId("task-2"), ALICE, ConversationId("conv-1"), MessageId("msg-2"))
    await control.register(INFO, ttl=60)
    await control.register(other, ttl=60)
    assert await control.request_stop(TASK, ALICE)
    assert not await control.stop_requested(other.task_id)


async def test_many_concurrent_stop_checks_each_get_their_own_tasks_answer(control: TaskControl) -> None:
    tasks = [TaskId(f"task-{n}") for n in range(30)]
    for task in tasks:
        await control.register(TaskInfo(task, ALICE, ConversationId("c"), MessageId(f"m-{task}")), ttl=60)
    for task in tasks[::3]:
        assert await control.request_stop(task, ALICE)
    seen = await asyncio.gather(*(control.stop_requested(task) for task in tasks))
    assert seen == [n % 3 == 0 for n in range(30)]


async def test_registration_expires_after_its_ttl(control: TaskControl) -> None:
    await control.register(INFO, ttl=0.2)
    assert await control.get(TASK) == INFO
    await asyncio.sleep(0.4)
    assert await control.get(TASK) is None
    assert await control.request_stop(TASK, ALICE) is False


async def test_stop_flag_expires_after_the_stop_ttl(redis_client: RedisClient) -> None:  # noqa: F811
    for control in (InProcessTaskControl(stop_ttl=0.2), RedisTaskControl(redis_client, stop_ttl=0.2)):
        await control.register(INFO, ttl=60)
        assert await control.request_stop(TASK, ALICE)
        await asyncio.sleep(0.4)
        assert not await control.stop_requested(TASK)


async def test_inprocess_expiries_run_on_its_clock() -> None:
    time = FakeClock(step=0)
    control = InProcessTaskControl(stop_ttl=30, clock=time.monotonic)
    await control.register(INFO, ttl=60)
    assert await control.request_stop(TASK, ALICE)
    time.advance(30)
    assert await control.stop_requested(TASK)  # a flag lapses after its ttl, not at it
    time.advance(0.5)
    assert not await control.stop_requested(TASK)
    time.advance(29.5)  # 60 s since the registration
    assert await control.get(TASK) == INFO
    time.advance(0.5)
    assert await control.get(TASK) is None
    assert await control.request_stop(TASK, ALICE) is False


async def test_redis_failure_raises_event_log_unavailable() -> None:
    client = dead_redis_client()
    control = RedisTaskControl(client)
    try:
        calls = (
            lambda: control.register(INFO, ttl=60),
            lambda: control.get(TASK),
            lambda: control.request_stop(TASK, ALICE),
            lambda: control.stop_requested(TASK),
        )
        for call in calls:
            with pytest.raises(EventStoreUnavailable) as caught:
                await call()
            assert "s3cret-pass" not in caught.value.message
    finally:
        await client.close()
