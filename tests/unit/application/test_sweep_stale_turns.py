from __future__ import annotations

from datetime import timedelta

from application.tasks.sweep_stale_turns import WORKER_GONE, SweepStaleTurns
from domain.conversation import Conversation, Message, MessageStatus
from domain.ids import AppId, ConversationId, MessageId, OwnerId, TaskId
from infrastructure.events.inprocess_event_log import InProcessEventLog
from infrastructure.events.inprocess_task_presence import InProcessTaskPresence
from tests.fakes import T0, CollectingSpawner, FakeClock, FakeMessageStore, SequentialIds

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
        store, presence, spawner or CollectingSpawner(), log, FakeClock(T0), SequentialIds(), worker_lease=15,
        retention=60,
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
