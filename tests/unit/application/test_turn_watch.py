"""TurnWatch: a stop is checked every interval, a client's lease far less often, and both end the turn."""

from __future__ import annotations

import asyncio

import pytest

from application.chat_turn.turn_watch import StopReason, StopRequested, TurnWatch, WatchTimes, until_next_check
from application.ports.task_control import TaskInfo
from domain.ids import ConversationId, MessageId, OwnerId, TaskId
from infrastructure.events.inprocess_task_control import InProcessTaskControl
from infrastructure.events.inprocess_task_presence import InProcessTaskPresence
from tests.fakes import FakeClock

TASK = TaskId("t-1")
OWNER = OwnerId("alice")
TIMES = WatchTimes(stop_check_interval=0.001, client_grace=1.0, worker_lease=15.0)
INFO = TaskInfo(TASK, OWNER, ConversationId("c"), MessageId("m"))


class CountingTasks(InProcessTaskControl):
    """Counts stop checks; `enough` is set at the 60th."""

    def __init__(self) -> None:
        super().__init__()
        self.checks = 0
        self.enough = asyncio.Event()

    async def stop_requested(self, task_id: TaskId) -> bool:
        self.checks += 1
        if self.checks >= 60:
            self.enough.set()
        return await super().stop_requested(task_id)


class CountingPresence(InProcessTaskPresence):
    def __init__(self) -> None:
        super().__init__(clock=FakeClock(step=0).monotonic)  # time stands still: the client's lease holds
        self.checks = 0

    async def client_attached(self, task_id: TaskId) -> bool:
        self.checks += 1
        return await super().client_attached(task_id)


async def test_the_client_lease_is_checked_far_less_often_than_the_stop_flag() -> None:
    tasks, presence = CountingTasks(), CountingPresence()
    watch = TurnWatch(tasks, presence, FakeClock(step=0.01), INFO, TIMES)

    async def followed() -> None:
        await presence.client_beat(TASK, TIMES.client_grace)  # as its follower does
        await tasks.enough.wait()

    await watch.run(followed())
    assert 1 <= presence.checks <= tasks.checks // 2


async def test_a_stop_request_and_a_gone_client_each_end_the_watched_work() -> None:
    for reason in (StopReason.REQUESTED, StopReason.CLIENT_GONE):
        clock = FakeClock(step=0.01)
        tasks, presence = InProcessTaskControl(clock=clock.monotonic), InProcessTaskPresence(clock=clock.monotonic)
        if reason is StopReason.REQUESTED:
            await tasks.register(INFO, ttl=60)
            assert await tasks.request_stop(TASK, OWNER)
        # Otherwise no client ever follows: the grace from the turn's start (client_grace) runs out.
        watch = TurnWatch(tasks, presence, clock, INFO, TIMES)
        with pytest.raises(StopRequested) as stopped:
            await watch.run(asyncio.sleep(5))
        assert stopped.value.reason is reason


def test_turns_started_at_different_moments_check_at_the_same_moments() -> None:
    every = 0.2
    for started in (10.01, 10.07, 10.19999):
        assert started + until_next_check(started, every) == pytest.approx(10.2)
    assert all(0 < until_next_check(now, every) <= every for now in (0.0, 0.2, 10.2, 123.4567))


class ForgetfulPresence(InProcessTaskPresence):
    """Loses every record once, at the client check: a Redis FLUSHALL in the middle of a turn."""

    def __init__(self, clock: FakeClock) -> None:
        super().__init__(clock=clock.monotonic)
        self.flushed = asyncio.Event()

    async def client_attached(self, task_id: TaskId) -> bool:
        if not self.flushed.is_set():
            self.flushed.set()
            self._workers.clear()
            self._clients.clear()
        return await super().client_attached(task_id)


async def test_lost_presence_records_are_no_client_gone_and_the_task_record_comes_back() -> None:
    clock = FakeClock(step=0.01)
    tasks, presence = InProcessTaskControl(clock=clock.monotonic), ForgetfulPresence(clock)
    times = WatchTimes(stop_check_interval=0.001, client_grace=5.0, worker_lease=0.3)
    watch = TurnWatch(tasks, presence, clock, INFO, times)

    async def work() -> None:
        await presence.flushed.wait()
        for _ in range(50):  # the client beats again after the flush, as a follower does
            await presence.client_beat(TASK, 5.0)
            await asyncio.sleep(0)

    await watch.run(work())  # ends by itself: no StopRequested
    assert await tasks.get(TASK) == INFO  # written again by the worker's beats


class FlushedBeforeABeat(InProcessTaskPresence):
    """Loses every record just before the worker's second lease renewal: the renewal comes first."""

    def __init__(self, clock: FakeClock) -> None:
        super().__init__(clock=clock.monotonic)
        self.beats = 0
        self.flushed = asyncio.Event()

    async def worker_beat(self, task_id: TaskId, ttl: float) -> None:
        self.beats += 1
        if self.beats == 2:
            self._workers.clear()
            self._clients.clear()
            self.flushed.set()
        await super().worker_beat(task_id, ttl)


async def test_records_lost_just_before_a_lease_renewal_are_no_client_gone_either() -> None:
    clock = FakeClock(step=0.01)
    tasks, presence = InProcessTaskControl(clock=clock.monotonic), FlushedBeforeABeat(clock)
    times = WatchTimes(stop_check_interval=0.001, client_grace=5.0, worker_lease=0.3)
    watch = TurnWatch(tasks, presence, clock, INFO, times)

    async def work() -> None:
        await presence.flushed.wait()
        for _ in range(200):  # the client checks run before the client beats again
            await asyncio.sleep(0)
        await presence.client_beat(TASK, 5.0)

    await watch.run(work())  # ends by itself: no StopRequested


class CountingBeats(InProcessTaskPresence):
    def __init__(self, clock: FakeClock) -> None:
        super().__init__(clock=clock.monotonic)
        self.client_beats = 0

    async def client_beat(self, task_id: TaskId, ttl: float) -> None:
        self.client_beats += 1
        await super().client_beat(task_id, ttl)


async def test_a_turn_no_client_follows_is_stopped_only_after_its_grace_and_writes_no_client_lease() -> None:
    clock = FakeClock(step=0.01)
    tasks, presence = InProcessTaskControl(clock=clock.monotonic), CountingBeats(clock)
    watch = TurnWatch(tasks, presence, clock, INFO, TIMES)
    started = clock.monotonic()

    with pytest.raises(StopRequested) as stopped:
        await watch.run(asyncio.sleep(5))

    assert stopped.value.reason is StopReason.CLIENT_GONE
    assert clock.monotonic() - started >= TIMES.client_grace  # the start counted as a client attached
    assert presence.client_beats == 0  # kept in the watch, not written for every turn
