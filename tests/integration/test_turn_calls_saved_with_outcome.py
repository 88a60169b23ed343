"""A turn's own model calls are written in the transaction that saves its outcome (SQLite and
PostgreSQL), not by the ledger's writer beside it; a save that fails hands them back to the writer,
so none is lost and none is written twice."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import pytest

from application.chat_turn.save_outcome import SaveOutcome
from application.model_calls.call_scope import CallScope, calls_for, kept_calls
from application.model_calls.record_model_calls import RecordModelCalls
from domain.billing.model_calls import ModelCall
from domain.conversations.conversation import Conversation, Message, MessageStatus, TurnOutcome
from domain.conversations.messages import Usage
from domain.ids import AppId, ConversationId, MessageId, OwnerId, TaskId
from infrastructure.persistence.sqlalchemy_message_store import SqlAlchemyMessageStore
from infrastructure.persistence.sqlalchemy_model_call_ledger import SqlAlchemyModelCallLedger
from tests.fakes import FakeClock, SequentialIds
from tests.integration.db_fixtures import (  # noqa: F401  (fixtures are used by name)
    database,
    database_url,
    pg_database_url,
)
from tests.integration.test_model_call_ledger_contract import ledger  # noqa: F401  (a fixture)

if TYPE_CHECKING:
    from infrastructure.persistence.database import Database

pytestmark = pytest.mark.integration

NOON = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)


async def running_turn(database: Database, n: int) -> Message:  # noqa: F811
    conversation = Conversation(id=ConversationId(f"c{n}"), app_id=AppId("ada"), owner=OwnerId("alice"),
                                created_at=NOON, updated_at=NOON)
    message = Message(id=MessageId(f"m{n}"), conversation_id=conversation.id, owner=OwnerId("alice"),
                      task_id=TaskId(f"t{n}"), query="q", created_at=NOON, updated_at=NOON, agent_id=AppId("ada"))
    await SqlAlchemyMessageStore(database).open_turn(message, conversation)
    return message


def turn_calls(recorder: RecordModelCalls, message: Message) -> list[ModelCall]:
    """Inside the turn's scope, keeping its calls: two chat calls (one cut) and a title."""
    scope = CallScope("alice", "ada", message.conversation_id, message.id, kept=[])
    with calls_for(scope):
        recorder.record("chat", "default", "gpt-4o-mini", Usage(100, 20, 0.01), 0.5, "ok")
        recorder.record("chat", "default", "gpt-4o-mini", Usage(10, 2, 0.001, estimated=True), 0.1, "cancelled")
        recorder.record("title", "default", "gpt-4o-mini", Usage(30, 4, 0.002), 0.2, "ok")
        return kept_calls()


async def test_a_turns_own_calls_are_written_with_its_outcome_and_the_others_by_the_writer(
    database: Database, ledger: SqlAlchemyModelCallLedger  # noqa: F811
) -> None:
    recorder = RecordModelCalls(ledger, FakeClock(NOON), SequentialIds())
    message = await running_turn(database, 1)
    calls = turn_calls(recorder, message)
    assert [c.purpose for c in calls] == ["chat", "chat"]
    await recorder.flush()  # the title only: the chat calls wait for the outcome
    assert [(p.purpose, p.calls) for p in await ledger.conversation_usage("c1")] == [("title", 1)]
    save = SaveOutcome(SqlAlchemyMessageStore(database), retry_for=0, ledger=recorder)
    finished = message.finish(TurnOutcome("a", MessageStatus.NORMAL, Usage(110, 22, 0.011), 1.0), NOON)
    assert await save(finished, [], calls) is None
    await recorder.flush()
    assert [(p.purpose, p.calls, p.tokens) for p in await ledger.conversation_usage("c1")] == [
        ("chat", 2, 132), ("title", 1, 34),
    ]


async def test_calls_a_failed_save_could_not_keep_are_written_by_the_writer_once(
    database: Database, ledger: SqlAlchemyModelCallLedger  # noqa: F811
) -> None:
    recorder = RecordModelCalls(ledger, FakeClock(NOON), SequentialIds())
    message = await running_turn(database, 2)
    calls = turn_calls(recorder, message)
    store = SqlAlchemyMessageStore(database)
    done = message.finish(TurnOutcome("a", MessageStatus.NORMAL, Usage(), 1.0), NOON)
    await store.finish_message(done, [])  # finished elsewhere meanwhile (a sweep): this save is refused
    save = SaveOutcome(store, retry_for=0, ledger=recorder)
    assert await save(done, [], calls) is not None
    await recorder.flush()
    assert [(p.purpose, p.calls) for p in await ledger.conversation_usage("c2")] == [("chat", 2), ("title", 1)]


async def test_calls_saved_and_then_handed_to_the_writer_again_are_written_once(
    database: Database, ledger: SqlAlchemyModelCallLedger  # noqa: F811
) -> None:
    recorder = RecordModelCalls(ledger, FakeClock(NOON), SequentialIds())
    message = await running_turn(database, 3)
    calls = turn_calls(recorder, message)
    save = SaveOutcome(SqlAlchemyMessageStore(database), retry_for=0, ledger=recorder)
    assert await save(message.finish(TurnOutcome("a", MessageStatus.NORMAL, Usage(), 1.0), NOON), [], calls) is None
    recorder.write(calls)  # as after a commit whose answer was lost with its connection
    await recorder.flush()
    assert [(p.purpose, p.calls) for p in await ledger.conversation_usage("c3")] == [("chat", 2), ("title", 1)]


class StalledStore(SqlAlchemyMessageStore):
    """A store whose saves never answer (a database hanging as the server shuts down)."""

    async def finish_message(self, *args: object, **kwargs: object) -> None:
        await asyncio.Event().wait()


async def test_a_save_cancelled_by_a_shutdown_hands_its_calls_to_the_writer(
    database: Database, ledger: SqlAlchemyModelCallLedger  # noqa: F811
) -> None:
    recorder = RecordModelCalls(ledger, FakeClock(NOON), SequentialIds())
    message = await running_turn(database, 4)
    calls = turn_calls(recorder, message)
    save = SaveOutcome(StalledStore(database), retry_for=0, ledger=recorder)
    saving = asyncio.create_task(save(message.finish(TurnOutcome("a", MessageStatus.NORMAL, Usage(), 1.0), NOON),
                                      [], calls))
    await asyncio.sleep(0.05)
    saving.cancel()
    with pytest.raises(asyncio.CancelledError):
        await saving
    await recorder.flush()
    assert [(p.purpose, p.calls) for p in await ledger.conversation_usage("c4")] == [("chat", 2), ("title", 1)]
