"""The in-process task records, leases and event logs forget finished turns by themselves: nobody asks
about a finished turn again, so an entry dropped only when read would stay for the life of the process."""

from __future__ import annotations

import asyncio

import pytest

from application.errors import UpkeepBusy
from application.ports.task_control import TaskInfo
from domain.conversations.thoughts import AgentThought, ThoughtEvent
from domain.ids import ConversationId, MessageId, OwnerId, TaskId, ThoughtId
from infrastructure.events.inprocess_event_log import InProcessEventLog
from infrastructure.events.inprocess_task_control import InProcessTaskControl
from infrastructure.events.inprocess_task_presence import SWEEP_FLOOR, InProcessTaskPresence
from infrastructure.memory.inprocess_memory_store import InProcessMemoryStore
from tests.fakes import FakeClock

OWNER = OwnerId("alice")


def info(n: int) -> TaskInfo:
    return TaskInfo(TaskId(f"task-{n}"), OWNER, ConversationId(f"c-{n}"), MessageId(f"m-{n}"))


async def test_task_records_and_stop_flags_of_lapsed_turns_go_when_later_turns_register() -> None:
    clock = FakeClock(step=0)
    control = InProcessTaskControl(stop_ttl=5.0, clock=clock.monotonic)
    for n in range(100):
        await control.register(info(n), ttl=10.0)
    assert await control.request_stop(TaskId("task-0"), OWNER)
    clock.advance(11.0)
    await control.register(info(100), ttl=10.0)
    assert len(control._tasks) == 1, "only the live turn is kept"
    assert not control._stops
    assert await control.get(TaskId("task-100")) == info(100)


async def test_a_task_registered_again_keeps_its_newer_deadline() -> None:
    clock = FakeClock(step=0)
    control = InProcessTaskControl(clock=clock.monotonic)
    await control.register(info(1), ttl=1.0)
    clock.advance(0.5)
    await control.register(info(1), ttl=10.0)  # the worker's lease renewed the record
    clock.advance(1.0)
    await control.register(info(2), ttl=1.0)
    assert await control.get(TaskId("task-1")) == info(1)


async def test_lapsed_leases_go_once_the_leases_doubled_and_live_ones_stay() -> None:
    clock = FakeClock(step=0)
    presence = InProcessTaskPresence(clock=clock.monotonic)
    for n in range(SWEEP_FLOOR * 3):
        await presence.client_beat(TaskId(f"task-{n}"), 1.0)
        await presence.worker_beat(TaskId(f"task-{n}"), 1.0)
        clock.advance(0.1)  # each turn's lease lapses while later ones start
    assert len(presence._clients.deadlines) < SWEEP_FLOOR * 2
    assert len(presence._workers.deadlines) < SWEEP_FLOOR * 2
    assert await presence.client_attached(TaskId(f"task-{SWEEP_FLOOR * 3 - 1}"))
    assert await presence.worker_alive(TaskId(f"task-{SWEEP_FLOOR * 3 - 1}"))


def delta(task_id: TaskId) -> AgentThought:
    return AgentThought(id=ThoughtId("th-1"), task_id=task_id, conversation_id=ConversationId("c-1"),
                        message_id=MessageId("m-1"), event=ThoughtEvent.AGENT_MESSAGE, answer="hi")


async def test_closed_event_logs_past_the_bound_go_those_due_first_and_open_ones_stay() -> None:
    clock = FakeClock(step=0)
    log = InProcessEventLog(clock=clock.monotonic, max_closed=3)
    await log.append(TaskId("running"), delta(TaskId("running")))
    for n in range(6):
        task = TaskId(f"done-{n}")
        await log.append(task, delta(task))
        await log.close(task, retention=3600.0 - n)  # done-5 is due first
    kept = [n for n in range(6) if await log.read(TaskId(f"done-{n}"), 0, 0)]
    assert kept == [0, 1, 2], "the three due last are kept for replay"
    assert await log.read(TaskId("running"), 0, 0), "an open log is never dropped for the bound"


async def test_a_log_made_only_to_wait_on_goes_when_its_wait_ends_unanswered() -> None:
    log = InProcessEventLog()
    assert await log.read(TaskId("never"), 0, 0.01) == []
    assert not log._logs, "nothing appended, nobody waiting: nothing kept"
    waiting = asyncio.create_task(log.read(TaskId("soon"), 0, 5.0))
    await asyncio.sleep(0.01)
    await log.append(TaskId("soon"), delta(TaskId("soon")))
    assert [e.id for e in await waiting] == [1], "a waiter is woken by the first append"


async def test_a_conversations_locks_go_once_nobody_holds_or_waits_for_them() -> None:
    store = InProcessMemoryStore(lock_wait=0.05)
    conversation = ConversationId("c-1")
    async with store.exclusive(conversation):
        with pytest.raises(UpkeepBusy):  # a second upkeep waits, then gives up
            async with store.exclusive(conversation):
                pass
        await store.save_window(conversation, [])
    await store.forget(conversation)
    assert not store._upkeep._locks
    assert not store._changes._locks
