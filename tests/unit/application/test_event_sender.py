"""EventSender: a turn's events reach the log in order, merged while the log is busy, failures raised once."""

from __future__ import annotations

import asyncio

import pytest

from application.chat_turn.event_sender import EventSender
from application.errors import EventStoreUnavailable
from domain.ids import ConversationId, MessageId, TaskId, ThoughtId
from domain.thoughts import AgentThought, ThoughtEvent
from tests.doubles import FailingEventLog

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


async def test_deltas_queued_behind_a_busy_log_merge_but_other_events_keep_their_order() -> None:
    log = FailingEventLog()
    sender = EventSender(log, TASK)
    await sender.send(event(ThoughtEvent.LONG_TERM_MEMORY_RECALL, thought_id="r"))
    for piece in ("Hel", "lo", "!"):
        await sender.send(event(ThoughtEvent.AGENT_MESSAGE, piece))
    await sender.send(event(ThoughtEvent.AGENT_END, "Hello!", thought_id="e"))
    await sender.flush()
    assert await logged(log) == [
        (1, "long_term_memory_recall", ""), (2, "agent_message", "Hello!"), (3, "agent_end", "Hello!"),
    ]
    assert log.appends == 1


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


async def test_a_full_queue_makes_send_wait_for_the_log() -> None:
    log = FailingEventLog()
    sender = EventSender(log, TASK, max_pending=2)
    await sender.send(event(ThoughtEvent.AGENT_THOUGHT, thought_id="1"))
    await sender.send(event(ThoughtEvent.AGENT_THOUGHT, thought_id="2"))  # the second queued: sent at once
    assert [e for _, e, _ in await logged(log)] == ["agent_thought", "agent_thought"]
