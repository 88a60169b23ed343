"""EventSender: a turn's events reach the log in order and at once, even while it is storing earlier ones;
failures raised once."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import pytest

from application.chat_turn.event_sender import EventSender
from application.errors import EventStoreUnavailable
from domain.conversations.thoughts import AgentThought, ThoughtEvent
from domain.ids import ConversationId, MessageId, TaskId, ThoughtId
from tests.doubles import FailingEventLog

if TYPE_CHECKING:
    from collections.abc import Sequence

TASK = TaskId("t-1")


def event(kind: ThoughtEvent, answer: str = "", thought_id: str = "a") -> AgentThought:
    return AgentThought(ThoughtId(thought_id), TASK, ConversationId("c"), MessageId("m"), kind, answer=answer)


async def logged(log: FailingEventLog) -> list[tuple[int, str, str]]:
    return [(e.id, e.thought.event.value, e.thought.answer) for e in await log.read(TASK, after=0, wait=0)]


async def test_events_sent_while_the_loop_runs_between_them_go_out_one_by_one() -> None:
    log = FailingEventLog()
    sender = EventSender(log, TASK)
    for piece in ("Hel", "lo"):
        await sender.send(event(ThoughtEvent.AGENT_MESSAGE, piece))
        await asyncio.sleep(0)
    await sender.flush()
    assert await logged(log) == [(1, "agent_message", "Hel"), (2, "agent_message", "lo")]


class SlowLog(FailingEventLog):
    """Hands events to readers at once, as the Redis log does, but stores them only when `store` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.store = asyncio.Event()

    def append_soon(self, task_id: TaskId, thoughts: Sequence[AgentThought]) -> asyncio.Future[int]:
        queued = super().append_soon(task_id, thoughts)
        return asyncio.ensure_future(self._stored_later(queued))

    async def _stored_later(self, queued: asyncio.Future[int]) -> int:
        await self.store.wait()
        return await queued


async def test_each_event_reaches_readers_at_once_while_earlier_ones_are_still_being_stored() -> None:
    log = SlowLog()
    sender = EventSender(log, TASK)
    await sender.send(event(ThoughtEvent.LONG_TERM_MEMORY_RECALL, thought_id="r"))
    for piece in ("Hel", "lo"):
        await sender.send(event(ThoughtEvent.AGENT_MESSAGE, piece))
    assert await logged(log) == [(1, "long_term_memory_recall", ""), (2, "agent_message", "Hel"),
                                 (3, "agent_message", "lo")]
    flushed = asyncio.create_task(sender.flush())
    await asyncio.sleep(0.01)
    assert not flushed.done()  # flush waits until they are stored
    log.store.set()
    await asyncio.wait_for(flushed, 1)


async def test_a_cancelled_flush_leaves_the_events_to_be_stored() -> None:
    log = SlowLog()
    sender = EventSender(log, TASK)
    await sender.send(event(ThoughtEvent.AGENT_MESSAGE, "a"))
    flushed = asyncio.create_task(sender.flush())
    await asyncio.sleep(0)
    flushed.cancel()
    log.store.set()
    await sender.flush()  # the append was not cancelled with the first flush: it completes
    assert await logged(log) == [(1, "agent_message", "a")]


async def test_a_failed_append_is_raised_once_and_later_events_are_still_sent() -> None:
    log = FailingEventLog()
    log.failures = 1
    sender = EventSender(log, TASK)
    await sender.send(event(ThoughtEvent.AGENT_MESSAGE, "lost"))
    with pytest.raises(EventStoreUnavailable):
        await sender.flush()
    await sender.flush()  # raised once: the failure is gone
    await sender.send(event(ThoughtEvent.ERROR, thought_id="e"))
    await sender.flush()
    assert await logged(log) == [(1, "error", "")]


async def test_a_failure_nobody_raised_can_be_taken_before_the_end_is_sent() -> None:
    log = FailingEventLog()
    log.failures = 1
    sender = EventSender(log, TASK)
    await sender.send(event(ThoughtEvent.AGENT_MESSAGE, "lost"))
    await asyncio.sleep(0)  # the append fails while the turn is, say, being stopped
    assert isinstance(sender.take_failure(), EventStoreUnavailable)
    await sender.send(event(ThoughtEvent.STOP, thought_id="s"))
    await sender.flush()
    assert await logged(log) == [(1, "stop", "")]


async def test_too_many_unstored_events_make_send_wait_for_the_log() -> None:
    log = SlowLog()
    sender = EventSender(log, TASK, max_unstored=2)
    await sender.send(event(ThoughtEvent.AGENT_THOUGHT, thought_id="1"))
    second = asyncio.create_task(sender.send(event(ThoughtEvent.AGENT_THOUGHT, thought_id="2")))
    await asyncio.sleep(0.01)
    assert not second.done()  # two events not stored yet: the second send waits for them
    log.store.set()
    await asyncio.wait_for(second, 1)
