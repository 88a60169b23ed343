"""The ledger's writer keeps the calls the database could not take and writes them, once, when it
is back: tried again with a growing back-off, bounded in memory (past the bound new calls are
dropped and counted in the log), given one last try at shutdown."""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime

import pytest

from application.chat_turn.save_outcome import SaveOutcome
from application.errors import InvalidInput
from application.model_calls.call_scope import CallScope, calls_for, kept_calls
from application.model_calls.record_model_calls import RecordModelCalls
from domain.conversations.conversation import Message, MessageStatus, TurnOutcome
from domain.conversations.messages import Usage
from domain.ids import AppId, ConversationId, MessageId, OwnerId, TaskId
from tests.fake_message_store import FakeMessageStore
from tests.fake_model_call_ledger import FakeModelCallLedger
from tests.fakes import FakeClock, SequentialIds

NOON = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
QUICK = (0.001, 0.001)  # the back-off, first and longest wait: tries follow each other at once
NEVER = (3600.0, 3600.0)  # a back-off no test waits out: only `close` cuts it short


def recorder_on(ledger: FakeModelCallLedger, backoff: tuple[float, float] = QUICK, **kw: int) -> RecordModelCalls:
    return RecordModelCalls(ledger, FakeClock(NOON), SequentialIds(), backoff=backoff, **kw)


def record(recorder: RecordModelCalls, count: int, purpose: str = "title") -> None:
    for _ in range(count):
        recorder.record(purpose, "default", "gpt-4o-mini", Usage(10, 2, 0.001), 0.1, "ok")


async def tried(ledger: FakeModelCallLedger, times: int) -> None:
    """Until the writer has tried to write `times` times (it is then waiting to try again)."""
    for _ in range(10_000):
        if ledger.tries >= times:
            return
        await asyncio.sleep(0)
    raise AssertionError(f"the writer tried {ledger.tries} times, not {times}")


async def test_a_batch_the_database_could_not_take_is_written_once_when_it_is_back() -> None:
    ledger = FakeModelCallLedger(failing=3)
    recorder = recorder_on(ledger)
    record(recorder, 2)
    await recorder.flush()
    assert [c.id for c in ledger.calls] == ["id1", "id2"]
    assert ledger.tries == 4  # three failed, the fourth wrote them


async def test_calls_a_failed_save_could_not_keep_reach_the_ledger_once_the_database_is_back() -> None:
    ledger, store = FakeModelCallLedger(failing=2), FakeMessageStore()
    recorder = recorder_on(ledger)
    message = Message(id=MessageId("m1"), conversation_id=ConversationId("c1"), owner=OwnerId("alice"),
                      task_id=TaskId("t1"), query="q", created_at=NOON, updated_at=NOON, agent_id=AppId("ada"))
    with calls_for(CallScope("alice", "ada", "c1", "m1", kept=[])):
        record(recorder, 1, purpose="chat")
        calls = kept_calls()
    store.fail_finish = True  # the database is down as the turn ends: its save fails, then the writer's tries
    save = SaveOutcome(store, retry_for=0, ledger=recorder)
    assert await save(message.finish(TurnOutcome("a", MessageStatus.NORMAL, Usage(), 1.0), NOON), [], calls)
    await recorder.flush()
    assert [(c.message_id, c.purpose) for c in ledger.calls] == [("m1", "chat")]
    assert store.model_calls == []


async def test_past_its_bound_the_writer_drops_new_calls_and_says_how_many(caplog: pytest.LogCaptureFixture) -> None:
    ledger = FakeModelCallLedger()
    ledger.down = True
    recorder = recorder_on(ledger, max_pending=3)
    record(recorder, 2)
    await tried(ledger, 1)
    record(recorder, 3)  # one fits, two do not
    ledger.down = False
    with caplog.at_level(logging.ERROR):
        await recorder.flush()
    assert [c.id for c in ledger.calls] == ["id1", "id2", "id3"]
    assert "2 model call(s) are missing from the ledger: dropped" in caplog.text
    record(recorder, 1)  # the count starts again: the backlog is written
    await recorder.flush()
    assert [c.id for c in ledger.calls][-1] == "id6"


async def test_close_tries_a_waiting_batch_at_once_and_writes_it_when_the_database_is_back() -> None:
    ledger = FakeModelCallLedger()
    ledger.down = True
    recorder = recorder_on(ledger, backoff=NEVER)
    record(recorder, 2)
    await tried(ledger, 1)
    ledger.down = False
    await asyncio.wait_for(recorder.close(), 5)  # the hour-long wait is cut short
    assert [c.id for c in ledger.calls] == ["id1", "id2"]
    assert ledger.tries == 2


async def test_close_gives_up_on_calls_the_database_still_does_not_take(caplog: pytest.LogCaptureFixture) -> None:
    ledger = FakeModelCallLedger()
    ledger.down = True
    recorder = recorder_on(ledger, backoff=NEVER)
    record(recorder, 2)
    await tried(ledger, 1)
    with caplog.at_level(logging.ERROR):
        await asyncio.wait_for(recorder.close(), 5)
    assert (ledger.calls, ledger.tries) == ([], 2)
    assert "2 model call(s) are missing from the ledger: the database was unavailable at shutdown" in caplog.text


async def test_a_batch_the_database_refused_is_dropped_without_a_retry(caplog: pytest.LogCaptureFixture) -> None:
    ledger = FakeModelCallLedger()
    ledger.refuse = InvalidInput("The database refused a value.")
    recorder = recorder_on(ledger, backoff=NEVER)
    record(recorder, 1)
    with caplog.at_level(logging.ERROR):
        await asyncio.wait_for(recorder.flush(), 5)
    assert (ledger.calls, ledger.tries) == ([], 1)
    assert "1 model call(s) are missing from the ledger: The database refused a value." in caplog.text
    record(recorder, 1)
    await recorder.flush()
    assert [c.id for c in ledger.calls] == ["id2"]
