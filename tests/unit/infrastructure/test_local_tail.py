from __future__ import annotations

import asyncio

from domain.ids import ConversationId, MessageId, TaskId, ThoughtId
from domain.thoughts import AgentThought, ThoughtEvent
from infrastructure.events.local_tail import LocalTail

TASK = TaskId("t-1")


def delta(answer: str) -> AgentThought:
    return AgentThought(
        ThoughtId("th"), TASK, ConversationId("c"), MessageId("m"), ThoughtEvent.AGENT_MESSAGE, answer=answer
    )


def answers(events: list | None) -> list[tuple[int, str]] | None:  # type: ignore[type-arg]
    return None if events is None else [(e.id, e.thought.answer) for e in events]


async def test_a_tail_appended_from_the_first_event_serves_reads_from_memory() -> None:
    tail = LocalTail(max_len=100)
    tail.appended(TASK, 2, [delta("a"), delta("b")])
    tail.appended(TASK, 3, [delta("c")])
    assert answers(await tail.read(TASK, 1, 0)) == [(2, "b"), (3, "c")]
    assert answers(await tail.read(TASK, 3, 0)) == []


async def test_a_task_not_appended_here_from_its_start_is_read_from_the_record() -> None:
    tail = LocalTail(max_len=100)
    tail.appended(TASK, 7, [delta("late")])  # e.g. a sweep ending another worker's turn
    assert await tail.read(TASK, 0, 0) is None


async def test_a_gap_or_a_trimmed_stream_drops_the_tail() -> None:
    gap, short = LocalTail(max_len=100), LocalTail(max_len=2)
    gap.appended(TASK, 1, [delta("a")])
    gap.appended(TASK, 3, [delta("c")])  # someone else appended event 2
    short.appended(TASK, 3, [delta("a"), delta("b"), delta("c")])
    assert await gap.read(TASK, 0, 0) is None
    assert await short.read(TASK, 0, 0) is None


async def test_a_waiting_reader_is_woken_by_an_append_and_sent_to_the_record_when_the_task_closes() -> None:
    tail = LocalTail(max_len=100)
    tail.appended(TASK, 1, [delta("a")])
    woken = asyncio.create_task(tail.read(TASK, 1, 5))
    await asyncio.sleep(0)
    tail.appended(TASK, 2, [delta("b")])
    assert answers(await woken) == [(2, "b")]
    dropped = asyncio.create_task(tail.read(TASK, 2, 5))
    await asyncio.sleep(0)
    tail.forget(TASK)
    assert await dropped is None


async def test_a_reader_that_waits_in_vain_gets_nothing() -> None:
    tail = LocalTail(max_len=100)
    tail.appended(TASK, 1, [delta("a")])
    assert answers(await tail.read(TASK, 1, 0.01)) == []


async def test_a_reader_of_an_opened_task_waits_in_memory_for_its_first_event() -> None:
    tail = LocalTail(max_len=100)
    tail.open(TASK)
    first = asyncio.create_task(tail.read(TASK, 0, 5))
    await asyncio.sleep(0)
    tail.appended(TASK, 1, [delta("a")])
    assert answers(await first) == [(1, "a")]


async def test_an_opened_task_whose_first_append_is_not_event_one_is_read_from_the_record() -> None:
    tail = LocalTail(max_len=100)
    tail.open(TASK)
    waiting = asyncio.create_task(tail.read(TASK, 0, 5))
    await asyncio.sleep(0)
    tail.appended(TASK, 2, [delta("b")])  # event 1 came from elsewhere
    assert await waiting is None


async def test_delivered_events_of_an_opened_task_get_the_next_ids_and_wake_a_waiting_reader() -> None:
    tail = LocalTail(max_len=100)
    tail.open(TASK)
    waiting = asyncio.create_task(tail.read(TASK, 0, 5))
    await asyncio.sleep(0)
    assert tail.deliver(TASK, [delta("a"), delta("b")]) == 2
    assert answers(await waiting) == [(1, "a"), (2, "b")]
    assert tail.deliver(TASK, [delta("c")]) == 3
    assert answers(await tail.read(TASK, 2, 0)) == [(3, "c")]


async def test_events_of_a_task_not_held_here_are_not_delivered_from_memory() -> None:
    tail = LocalTail(max_len=100)
    assert tail.deliver(TASK, [delta("a")]) is None
    assert await tail.read(TASK, 0, 0) is None


async def test_a_delivery_past_the_streams_length_drops_the_tail() -> None:
    tail = LocalTail(max_len=2)
    tail.open(TASK)
    assert tail.deliver(TASK, [delta("a"), delta("b")]) == 2
    assert tail.deliver(TASK, [delta("c")]) is None
    assert await tail.read(TASK, 0, 0) is None
