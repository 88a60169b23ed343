"""FollowTask: a follower whose task vanished with its events ends with an error, never pings forever;
events read together come as one batch, up to the terminal one."""

from __future__ import annotations

import asyncio

import pytest

from application.errors import EventStoreUnavailable
from application.ports.task_control import TaskInfo
from application.tasks.find_task import FindTask
from application.tasks.follow_task import FollowTask, FollowTimes
from domain.conversations.thoughts import AgentThought, ThoughtEvent
from domain.ids import ConversationId, MessageId, OwnerId, TaskId, ThoughtId
from infrastructure.events.inprocess_event_log import InProcessEventLog
from infrastructure.events.inprocess_task_control import InProcessTaskControl
from infrastructure.events.inprocess_task_presence import InProcessTaskPresence
from tests.fake_message_store import FakeMessageStore
from tests.fakes import FakeClock

INFO = TaskInfo(TaskId("t-1"), OwnerId("alice"), ConversationId("c"), MessageId("m"))


async def follow_pings(follow: FollowTask, limit: int) -> int:
    """How many keep-alives the follower sends before it ends (it must end within `limit`)."""
    pings = 0
    async for logged in follow(INFO.task_id):
        assert logged is None
        pings += 1
        if pings >= limit:
            break
    return pings


async def test_a_follower_of_a_task_that_vanished_for_good_ends_with_an_error() -> None:
    clock = FakeClock(step=0.0)
    tasks, log = InProcessTaskControl(clock=clock.monotonic), InProcessEventLog(clock=clock.monotonic)
    await tasks.register(INFO, ttl=1.0)
    await log.open(INFO.task_id)
    store = FakeMessageStore()
    follow = FollowTask(
        FindTask(tasks, store, 1800), tasks, log, InProcessTaskPresence(clock=clock.monotonic), store, clock,
        FollowTimes(0.01, 3.0),
    )

    async def time_passes() -> None:
        while True:
            clock.advance(0.5)  # the record's TTL lapses and nobody writes it again: the worker is gone
            await asyncio.sleep(0.005)

    ticking = asyncio.create_task(time_passes())
    try:
        with pytest.raises(EventStoreUnavailable, match="events were lost"):
            await asyncio.wait_for(follow_pings(follow, 1000), 10)
    finally:
        ticking.cancel()


async def test_a_follower_whose_task_record_comes_back_keeps_following() -> None:
    clock = FakeClock(step=0.0)
    tasks, log = InProcessTaskControl(clock=clock.monotonic), InProcessEventLog(clock=clock.monotonic)
    await log.open(INFO.task_id)
    store = FakeMessageStore()
    follow = FollowTask(
        FindTask(tasks, store, 1800), tasks, log, InProcessTaskPresence(clock=clock.monotonic), store, clock,
        FollowTimes(0.01, 3.0),
    )

    async def worker_beats() -> None:
        while True:
            clock.advance(0.5)
            await tasks.register(INFO, ttl=0.4)  # missing between beats now and then, never for long
            await asyncio.sleep(0.005)

    beating = asyncio.create_task(worker_beats())
    try:
        assert await asyncio.wait_for(follow_pings(follow, 30), 10) == 30
    finally:
        beating.cancel()


def event(thought_id: str, kind: ThoughtEvent, answer: str = "") -> AgentThought:
    return AgentThought(ThoughtId(thought_id), INFO.task_id, ConversationId("c"), MessageId("m"), kind, answer=answer)


def following(log: InProcessEventLog, clock: FakeClock) -> FollowTask:
    tasks, store = InProcessTaskControl(clock=clock.monotonic), FakeMessageStore()
    return FollowTask(FindTask(tasks, store, 1800), tasks, log, InProcessTaskPresence(clock=clock.monotonic), store,
                      clock, FollowTimes(15.0, 30.0))


async def test_events_read_together_come_as_one_batch_that_the_terminal_event_ends() -> None:
    clock = FakeClock(step=0.0)
    log = InProcessEventLog(clock=clock.monotonic)
    await log.open(INFO.task_id)
    answer = [event("a", ThoughtEvent.AGENT_MESSAGE, "Hel"), event("a", ThoughtEvent.AGENT_MESSAGE, "lo")]
    await log.append_many(INFO.task_id, [*answer, event("e", ThoughtEvent.AGENT_END, "Hello")])
    await log.append(INFO.task_id, event("x", ThoughtEvent.AGENT_MESSAGE, "after the end"))

    batches = [batch async for batch in following(log, clock).batches(INFO.task_id)]

    assert [[(b.id, b.thought.answer) for b in batch or []] for batch in batches] == [
        [(1, "Hel"), (2, "lo"), (3, "Hello")]
    ]


async def test_one_at_a_time_the_follower_yields_the_same_events_as_its_batches() -> None:
    clock = FakeClock(step=0.0)
    log = InProcessEventLog(clock=clock.monotonic)
    await log.open(INFO.task_id)
    await log.append_many(INFO.task_id, [event("a", ThoughtEvent.AGENT_MESSAGE, "Hi"),
                                         event("b", ThoughtEvent.AGENT_END)])

    events = [logged async for logged in following(log, clock)(INFO.task_id)]

    assert [(logged.id, logged.thought.event) for logged in events if logged is not None] == [
        (1, ThoughtEvent.AGENT_MESSAGE), (2, ThoughtEvent.AGENT_END)
    ]
