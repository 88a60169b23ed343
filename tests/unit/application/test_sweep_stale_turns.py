from __future__ import annotations

import asyncio
from datetime import timedelta

from application.tasks.sweep_stale_turns import WORKER_GONE, SweepStaleTurns, SweepTimes
from domain.conversations.conversation import Conversation, Message, MessageStatus
from domain.conversations.thoughts import AgentThought, ThoughtEvent
from domain.ids import AppId, ConversationId, MessageId, OwnerId, TaskId, ThoughtId
from infrastructure.events.inprocess_event_log import InProcessEventLog
from infrastructure.events.inprocess_task_presence import InProcessTaskPresence
from tests.fake_message_store import FakeMessageStore
from tests.fakes import T0, CollectingSpawner, FakeClock, SequentialIds

OWNER = OwnerId("alice")


async def running(store: FakeMessageStore, n: int, age: float) -> Message:
    conversation = Conversation(ConversationId(f"c{n}"), AppId("default"), OWNER, T0, T0)
    at = T0 - timedelta(seconds=age)
    message = Message(MessageId(f"m{n}"), conversation.id, OWNER, TaskId(f"t{n}"), "hi", at, at)
    await store.open_turn(message, conversation)
    return message


def sweeper(
    store: FakeMessageStore,
    presence: InProcessTaskPresence,
    log: InProcessEventLog,
    spawner: CollectingSpawner | None = None,
) -> SweepStaleTurns:
    return SweepStaleTurns(
        store, presence, spawner or CollectingSpawner(), log, FakeClock(T0), SequentialIds(),
        SweepTimes(worker_lease=15, retention=60, confirm_after=0.01),
    )


async def test_a_turn_whose_worker_is_gone_ends_with_error_and_an_error_event() -> None:
    time = FakeClock(step=0)
    store, presence, log = FakeMessageStore(), InProcessTaskPresence(), InProcessEventLog(clock=time.monotonic)
    orphan = await running(store, 1, age=60)
    assert await sweeper(store, presence, log)() == 1
    ended = store.messages[orphan.id]
    assert (ended.status, ended.error) == (MessageStatus.ERROR, WORKER_GONE)
    assert [e.thought.event.value for e in await log.read(orphan.task_id, 0, 0)] == ["error"]
    time.advance(59.9)
    assert await log.read(orphan.task_id, 0, 0), "the log is closed with the retention of 60 s"
    time.advance(0.2)
    assert await log.read(orphan.task_id, 0, 0) == []


async def test_a_turn_whose_worker_still_beats_is_left_running() -> None:
    store, presence, log = FakeMessageStore(), InProcessTaskPresence(), InProcessEventLog()
    alive = await running(store, 1, age=60)
    await presence.worker_beat(alive.task_id, 15)
    assert await sweeper(store, presence, log)() == 0
    assert store.messages[alive.id].status is MessageStatus.RUNNING


async def test_a_turn_younger_than_one_lease_is_left_to_start_beating() -> None:
    store, presence, log = FakeMessageStore(), InProcessTaskPresence(), InProcessEventLog()
    fresh = await running(store, 1, age=1)
    assert await sweeper(store, presence, log)() == 0
    assert store.messages[fresh.id].status is MessageStatus.RUNNING


async def test_a_turn_this_process_runs_is_never_swept_even_with_a_lapsed_lease() -> None:
    store, presence, log = FakeMessageStore(), InProcessTaskPresence(), InProcessEventLog()
    spawner = CollectingSpawner()
    busy = await running(store, 1, age=60)

    async def still_running() -> None:
        return None

    spawner.spawn(busy.task_id, still_running())
    assert await sweeper(store, presence, log, spawner)() == 0
    assert store.messages[busy.id].status is MessageStatus.RUNNING
    await spawner.run_all()


async def test_a_worker_whose_lease_comes_back_before_the_second_look_is_left_running() -> None:
    store, presence, log = FakeMessageStore(), InProcessTaskPresence(), InProcessEventLog()
    alive = await running(store, 1, age=60)  # its lease was lost with the presence store's records

    class Renewing(CollectingSpawner):  # its next renewal comes during the sweep's wait
        def is_running(self, task_id: TaskId) -> bool:
            return False

    sweep = sweeper(store, presence, log, Renewing())
    looking = asyncio.create_task(sweep())
    await asyncio.sleep(0)
    await presence.worker_beat(alive.task_id, 15)
    assert await looking == 0
    assert store.messages[alive.id].status is MessageStatus.RUNNING


async def test_a_swept_turn_keeps_its_streamed_answer_and_the_cause_its_worker_logged() -> None:
    store, presence, log = FakeMessageStore(), InProcessTaskPresence(), InProcessEventLog()
    cut = await running(store, 1, age=60)  # streamed, then its worker died: no terminal event
    saved_late = await running(store, 2, age=60)  # ended with an error event, but its save failed
    for message, events in ((cut, [("agent_message", "Half an ", ""), ("agent_message", "answer", "")]),
                            (saved_late, [("agent_message", "All done.", ""),
                                          ("error", "All done.", "The database is unavailable; try again shortly.")])):
        for event, answer, observation in events:
            await log.append(message.task_id, AgentThought(
                ThoughtId("a1"), message.task_id, message.conversation_id, message.id, ThoughtEvent(event),
                answer=answer, observation=observation))
    assert await sweeper(store, presence, log)() == 2
    first, second = store.messages[cut.id], store.messages[saved_late.id]
    assert (first.status, first.answer, first.error) == (MessageStatus.ERROR, "Half an answer", WORKER_GONE)
    assert (second.status, second.answer) == (MessageStatus.ERROR, "All done.")
    assert second.error == "The database is unavailable; try again shortly."
    assert [e.thought.event.value for e in await log.read(saved_late.task_id, 0, 0)][-1] == "error"  # not twice
    assert len(await log.read(saved_late.task_id, 0, 0)) == 2
