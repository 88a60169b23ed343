from __future__ import annotations

import asyncio

from domain.conversations.thoughts import AgentThought, ThoughtEvent
from domain.ids import ConversationId, MessageId, TaskId, ThoughtId
from infrastructure.events.local_tail import LocalTail

TASK = TaskId("t-1")


def delta(answer: str) -> AgentThought:
    return AgentThought(
        ThoughtId("th"), TASK, ConversationId("c"), MessageId("m"), ThoughtEvent.AGENT_MESSAGE, answer=answer
    )


def answers(events: list | None) -> list[tuple[int, str]] | None:  # type: ignore[type-arg]
    return None if events is None else [(e.id, e.thought.answer) for e in events]


async def test_an_opened_tasks_events_are_served_from_memory_with_the_next_ids() -> None:
    tail = LocalTail(max_len=100)
    tail.open(TASK)
    assert tail.deliver(TASK, [delta("a"), delta("b")]) == 2
    assert tail.deliver(TASK, [delta("c")]) == 3
    assert answers(await tail.read(TASK, 1, 0)) == [(2, "b"), (3, "c")]
    assert answers(await tail.read(TASK, 3, 0)) == []


async def test_a_task_not_opened_here_is_neither_kept_nor_served_from_memory() -> None:
    tail = LocalTail(max_len=100)
    assert tail.deliver(TASK, [delta("late")]) is None  # e.g. a sweep ending another worker's turn
    assert await tail.read(TASK, 0, 0) is None


async def test_a_delivery_past_the_streams_length_drops_the_tail() -> None:
    tail = LocalTail(max_len=2)
    tail.open(TASK)
    assert tail.deliver(TASK, [delta("a"), delta("b")]) == 2
    assert tail.deliver(TASK, [delta("c")]) is None
    assert await tail.read(TASK, 0, 0) is None


async def test_a_waiting_reader_is_woken_by_a_delivery_and_sent_to_the_record_when_the_task_is_dropped() -> None:
    tail = LocalTail(max_len=100)
    tail.open(TASK)
    tail.deliver(TASK, [delta("a")])
    woken = asyncio.create_task(tail.read(TASK, 1, 5))
    await asyncio.sleep(0)
    tail.deliver(TASK, [delta("b")])
    assert answers(await woken) == [(2, "b")]
    dropped = asyncio.create_task(tail.read(TASK, 2, 5))
    await asyncio.sleep(0)
    tail.forget(TASK)
    assert await dropped is None


async def test_a_reader_that_waits_in_vain_gets_nothing() -> None:
    tail = LocalTail(max_len=100)
    tail.open(TASK)
    tail.deliver(TASK, [delta("a")])
    assert answers(await tail.read(TASK, 1, 0.01)) == []


async def test_a_reader_of_an_opened_task_waits_in_memory_for_its_first_event() -> None:
    tail = LocalTail(max_len=100)
    tail.open(TASK)
    first = asyncio.create_task(tail.read(TASK, 0, 5))
    await asyncio.sleep(0)
    assert tail.deliver(TASK, [delta("a"), delta("b")]) == 2
    assert answers(await first) == [(1, "a"), (2, "b")]
