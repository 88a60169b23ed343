from __future__ import annotations

from datetime import timedelta

from application.tasks.sweep_stale_turns import WORKER_GONE, SweepStaleTurns
from domain.conversation import Conversation, Message, MessageStatus
from domain.ids import AppId, ConversationId, MessageId, OwnerId, TaskId
from tests.fakes import (
    T0,
    CollectingSpawner,
    FakeClock,
    FakeEventLog,
    FakeMessageStore,
    FakePresence,
    SequentialIds,
)

OWNER = OwnerId("alice")


async def running(store: FakeMessageStore, n: int, age: float) -> Message:
    conversation = Conversation(ConversationId(f"c{n}"), AppId("default"), OWNER, T0, T0)
    at = T0 - timedelta(seconds=age)
    message = Message(MessageId(f"m{n}"), conversation.id, OWNER, TaskId(f"t{n}"), "hi", at, at)
    await store.open_turn(message, conversation)
    return message


def sweeper(
    store: FakeMessageStore, presence: FakePresence, log: FakeEventLog, spawner: CollectingSpawner | None = None
) -> SweepStaleTurns:
    return SweepStaleTurns(
        store, presence, spawner or CollectingSpawner(), log, FakeClock(T0), SequentialIds(), worker_lease=15,
        retention=60,
    )


async def test_a_turn_whose_worker_is_gone_ends_with_error_and_an_error_event() -> None:
    store, presence, log = FakeMessageStore(), FakePresence(), FakeEventLog()
    orphan = await running(store, 1, age=60)
    assert await sweeper(store, presence, log)() == 1
    ended = store.messages[orphan.id]
    assert (ended.status, ended.error) == (MessageStatus.ERROR, WORKER_GONE)
    assert [t.event.value for t in log.events(orphan.task_id)] == ["error"]
    assert log.closed[orphan.task_id] == 60


async def test_a_turn_whose_worker_still_beats_is_left_running() -> None:
    store, presence, log = FakeMessageStore(), FakePresence(), FakeEventLog()
    alive = await running(store, 1, age=60)
    presence.workers.add(alive.task_id)
    assert await sweeper(store, presence, log)() == 0
    assert store.messages[alive.id].status is MessageStatus.RUNNING


async def test_a_turn_younger_than_one_lease_is_left_to_start_beating() -> None:
    store, presence, log = FakeMessageStore(), FakePresence(), FakeEventLog()
    fresh = await running(store, 1, age=1)
    assert await sweeper(store, presence, log)() == 0
    assert store.messages[fresh.id].status is MessageStatus.RUNNING


async def test_a_turn_this_process_runs_is_never_swept_even_with_a_lapsed_lease() -> None:
    store, presence, log, spawner = FakeMessageStore(), FakePresence(), FakeEventLog(), CollectingSpawner()
    busy = await running(store, 1, age=60)

    async def still_running() -> None:
        return None

    spawner.spawn(busy.task_id, still_running())
    assert await sweeper(store, presence, log, spawner)() == 0
    assert store.messages[busy.id].status is MessageStatus.RUNNING
    await spawner.run_all()
