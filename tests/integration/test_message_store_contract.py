"""The MessageStore contract, proven identically on SQLite and PostgreSQL.

Every test that takes `store` runs once per backend (see db_fixtures.database_url).
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone
from typing import TYPE_CHECKING

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Insert, column, insert, table, text

from application.errors import Conflict, InvalidInput, NotFound, StoreUnavailable
from domain.conversations.conversation import Conversation, Message, MessageAgentThought, MessageStatus, TurnOutcome
from domain.conversations.messages import Usage
from domain.ids import AppId, ConversationId, EndUserId, MessageId, OwnerId, TaskId, ThoughtId
from infrastructure.errors import DatabaseNotMigrated
from infrastructure.persistence.database import Database
from infrastructure.persistence.migrate import run_migrations
from infrastructure.persistence.rows import (
    Base,
    ConversationRow,
    MessageRow,
    conversation_values,
    message_from_domain,
    message_values,
)
from infrastructure.persistence.sqlalchemy_message_store import SqlAlchemyMessageStore
from infrastructure.persistence.turn_statements import RECENT_TURNS
from tests.integration.db_fixtures import (  # noqa: F401  (fixtures are used by name)
    database,
    database_url,
    migrated_url,
    pg_database_url,
    pg_unmigrated_database_url,
    sqlite_url,
)

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.integration

T0 = datetime(2026, 1, 1, tzinfo=UTC)
ALICE = OwnerId("alice")
BOB = OwnerId("bob")


def _id() -> str:
    return uuid.uuid4().hex


def conversation(owner: OwnerId = ALICE, **changes: object) -> Conversation:
    """A conversation as the store has it after its first turn at T0 (its list figures)."""
    made = Conversation(
        id=ConversationId(_id()), app_id=AppId("helper"), owner=owner, created_at=T0, updated_at=T0,
        message_count=1, last_active_at=T0,
    )
    return replace(made, **changes)  # type: ignore[arg-type]


def message(conv: Conversation, at: datetime = T0, **changes: object) -> Message:
    made = Message(
        id=MessageId(_id()), conversation_id=conv.id, owner=conv.owner, task_id=TaskId(_id()),
        query="What is the weather in Paris?", created_at=at, updated_at=at,
    )
    return replace(made, **changes)  # type: ignore[arg-type]


def finished(msg: Message, answer: str = "Sunny.", status: MessageStatus = MessageStatus.NORMAL) -> Message:
    outcome = TurnOutcome(answer, status, Usage(120, 34, 0.00123), 1.25, prompt="system: be brief")
    return msg.finish(outcome, msg.created_at + timedelta(seconds=2))


def step(msg: Message, position: int, **changes: object) -> MessageAgentThought:
    made = MessageAgentThought(
        id=ThoughtId(_id()), message_id=msg.id, position=position, event="agent_thought",
        created_at=msg.created_at + timedelta(seconds=position),
    )
    return replace(made, **changes)  # type: ignore[arg-type]


@pytest.fixture
def store(database: Database) -> SqlAlchemyMessageStore:  # noqa: F811
    return SqlAlchemyMessageStore(database)


async def add_turns(store: SqlAlchemyMessageStore, conv: Conversation, turns: list[Message]) -> None:
    """Add each turn as running, then finish it unless it is meant to stay RUNNING (only the last may)."""
    for index, turn in enumerate(turns):
        running = replace(turn, answer="", status=MessageStatus.RUNNING, error="", prompt="", usage=Usage())
        await store.open_turn(running, conv if index == 0 else None)
        if turn.status is not MessageStatus.RUNNING:
            await store.finish_message(turn, [])


# --- round trips -------------------------------------------------------------------------------


async def test_conversation_round_trips_every_field_as_utc(store: SqlAlchemyMessageStore) -> None:
    paris = timezone(timedelta(hours=1))
    conv = conversation(
        summary="Alice plans a trip to Paris.", created_at=datetime(2026, 3, 1, 9, 30, 15, 123456, paris),
        updated_at=datetime(2026, 3, 1, 10, 0, tzinfo=paris),
    )
    conv = replace(conv, end_user=EndUserId("alice@example.com"), title="Paris", title_by_user=True, pinned=True)
    first = message(conv)
    await store.open_turn(first, conv)

    loaded = await store.get_conversation(conv.id, ALICE)

    # The store keeps the list figures: one message, active when it came.
    assert loaded == replace(conv, message_count=1, last_active_at=first.created_at)
    assert loaded is not None
    assert loaded.created_at.tzinfo == UTC


async def test_message_round_trips_every_field(store: SqlAlchemyMessageStore) -> None:
    conv = conversation()
    running = message(conv, image_urls=("https://example.com/a.png", "data:image/png;base64,AAA="))
    await store.open_turn(running, conv)
    assert await store.get_message(running.id, ALICE) == running

    done = running.finish(
        TurnOutcome("Il fait beau ☀️", MessageStatus.ERROR, Usage(7, 9, 0.000123456789), 3.141592,
                    prompt="system: …\nuser: Paris?", error="the model timed out"),
        T0 + timedelta(seconds=4),
    )
    await store.finish_message(done, [])

    assert await store.get_message(running.id, ALICE) == done


async def test_the_recent_turns_and_the_conversation_read_for_upkeep_round_trip_every_field(
    store: SqlAlchemyMessageStore,
) -> None:
    conv = conversation()
    running = message(conv, image_urls=("https://example.com/a.png",))
    opened = await store.open_turn(running, conv)
    done = running.finish(
        TurnOutcome("Il fait beau ☀️", MessageStatus.NORMAL, Usage(7, 9, 0.000123456789), 3.141592, prompt="p"),
        T0 + timedelta(seconds=4),
    )
    await store.finish_message(done, [])
    await store.save_follow_ups(done.id, ["And tomorrow?"])
    kept = await store.get_message(done.id, ALICE)

    assert await store.recent_messages(conv.id, 5) == [kept]
    assert await store.conversation_tail(conv.id, ALICE, 5) == (await store.get_conversation(conv.id, ALICE), [kept])
    assert await store.get_conversation(conv.id, ALICE) == opened


async def test_steps_round_trip_every_field_in_position_order(store: SqlAlchemyMessageStore) -> None:
    conv = conversation()
    msg = message(conv)
    await store.open_turn(msg, conv)
    steps = [
        step(msg, 2, event="agent_message", answer="Sunny.", usage=Usage(50, 3, 0.0002), latency=0.4),
        step(msg, 0, event="long_term_memory_recall", observation="no memory"),
        step(msg, 1, event="agent_action", thought="I should look it up", tool="weather",
             tool_input={"city": "Paris", "days": [1, 2], "opts": {"unit": "°C", "exact": True}},
             observation='{"temp": 21}', prompt="user: Paris?", usage=Usage(40, 12, 0.0001), latency=0.25),
    ]

    await store.finish_message(finished(msg), steps)

    assert await store.list_steps(msg.id) == sorted(steps, key=lambda s: s.position)
    assert await store.list_steps(MessageId("no-such-message")) == []


async def test_save_summary_changes_only_summary_and_updated_at(store: SqlAlchemyMessageStore) -> None:
    conv = conversation()
    await store.open_turn(message(conv), conv)
    summarised = conv.with_summary("Alice likes Paris.", T0 + timedelta(hours=1))

    await store.save_summary(replace(summarised, app_id=AppId("ignored")))

    assert await store.get_conversation(conv.id, ALICE) == summarised


# --- what a turn ran (agents as data) ---------------------------------------------------------


async def test_a_debugger_turn_stores_the_draft_revision_and_entry_point_and_reads_them_back(
    store: SqlAlchemyMessageStore,
) -> None:
    conv = conversation(is_debug=True)
    running = message(conv, draft_revision=4, entry_point="debugger")
    assert await store.open_turn(running, conv) == conv

    assert await store.get_conversation(conv.id, ALICE) == conv
    assert await store.get_message(running.id, ALICE) == running
    assert await store.running_messages(T0 + timedelta(seconds=1), 100) == [running]
    done = finished(running)
    await store.finish_message(done, [])

    assert await store.get_message(running.id, ALICE) == done
    assert await store.list_messages(conv.id, 0, 10) == [done]
    assert await store.recent_messages(conv.id, 10) == [done]
    assert await store.conversation_tail(conv.id, ALICE, 10) == (conv, [done])
    assert (done.agent_version, done.draft_revision, done.entry_point) == (None, 4, "debugger")


async def test_a_turn_on_an_existing_conversation_stores_its_published_version(
    store: SqlAlchemyMessageStore,
) -> None:
    conv = conversation()
    first = finished(message(conv, agent_version=1, entry_point="api"))
    second = finished(message(conv, T0 + timedelta(minutes=1), agent_version=2, entry_point="mcp"))
    await add_turns(store, conv, [first, second])  # the second through the guarded insert (OPEN_MESSAGE)

    assert await store.list_messages(conv.id, 0, 10) == [first, second]
    assert [(m.agent_version, m.entry_point) for m in await store.recent_messages(conv.id, 10)] == [
        (1, "api"), (2, "mcp"),
    ]
    loaded = await store.get_conversation(conv.id, ALICE)
    assert loaded is not None
    assert loaded.is_debug is False


async def test_a_turn_that_names_no_agent_reads_back_as_an_api_turn(store: SqlAlchemyMessageStore) -> None:
    conv = conversation()
    msg = message(conv)
    await store.open_turn(msg, conv)

    loaded = await store.get_message(msg.id, ALICE)
    assert loaded is not None
    assert (loaded.agent_version, loaded.draft_revision, loaded.entry_point) == (None, None, "api")


def _insert_only(row: type[Base], values: dict[str, object], left_out: set[str]) -> Insert:
    """An INSERT of `values` but `left_out`, through plain columns: no client-side default fills them in."""
    kept = {name: value for name, value in values.items() if name not in left_out}
    columns = [column(c.name, c.type) for c in row.__table__.columns if c.name in kept]
    return insert(table(row.__tablename__, *columns)).values(kept)


async def test_rows_written_without_the_new_columns_get_their_server_defaults(
    store: SqlAlchemyMessageStore, database: Database  # noqa: F811
) -> None:
    conv = conversation()
    msg = message(conv)
    async with database.engine.begin() as connection:  # as code from before revision 0004 wrote them
        await connection.execute(_insert_only(ConversationRow, conversation_values(conv), {"is_debug"}))
        await connection.execute(
            _insert_only(MessageRow, message_values(msg), {"agent_version", "draft_revision", "entry_point"})
        )

    assert await store.get_conversation(conv.id, ALICE) == conv
    assert await store.get_message(msg.id, ALICE) == msg


# --- visibility --------------------------------------------------------------------------------


async def test_other_owner_gets_none_for_conversation_and_message(store: SqlAlchemyMessageStore) -> None:
    conv = conversation()
    msg = message(conv)
    await store.open_turn(msg, conv)

    assert await store.get_conversation(conv.id, BOB) is None
    assert await store.get_message(msg.id, BOB) is None
    assert await store.get_conversation(ConversationId("missing"), ALICE) is None
    assert await store.get_message(MessageId("missing"), ALICE) is None


async def test_soft_deleted_conversation_hides_it_and_its_messages(store: SqlAlchemyMessageStore) -> None:
    conv = conversation(deleted_at=T0 + timedelta(days=1))
    msg = message(conv)
    await store.open_turn(msg, conv)

    assert await store.get_conversation(conv.id, ALICE) is None
    assert await store.get_message(msg.id, ALICE) is None


async def test_message_of_task_reads_the_owners_message_of_a_task_in_any_status_unless_deleted(
    store: SqlAlchemyMessageStore,
) -> None:
    conv, gone = conversation(), conversation(deleted_at=T0 + timedelta(days=1))
    done, running, hidden = message(conv), message(conv, T0 + timedelta(seconds=5)), message(gone)
    await add_turns(store, conv, [finished(done), running])
    await store.open_turn(hidden, gone)

    for turn, status in [(done, MessageStatus.NORMAL), (running, MessageStatus.RUNNING)]:
        found = await store.message_of_task(turn.task_id, ALICE)
        assert found is not None
        assert found.status is status
        assert found == await store.get_message(turn.id, ALICE)
    assert await store.message_of_task(running.task_id, BOB) is None
    assert await store.message_of_task(hidden.task_id, ALICE) is None
    assert await store.message_of_task(TaskId("missing"), ALICE) is None


# --- atomicity ---------------------------------------------------------------------------------


async def test_open_turn_on_an_existing_conversation_keeps_it_and_returns_it_with_the_turn_counted(
    store: SqlAlchemyMessageStore,
) -> None:
    conv = conversation()
    first, second = message(conv), message(conv, T0 + timedelta(minutes=1))
    await store.open_turn(first, conv)
    await store.finish_message(finished(first), [])

    opened = await store.open_turn(second, None)

    assert opened == replace(conv, message_count=2, last_active_at=second.created_at)
    assert await store.get_conversation(conv.id, ALICE) == opened

    assert [m.id for m in await store.list_messages(conv.id, 0, 10)] == [first.id, second.id]


async def test_open_turn_while_a_turn_runs_is_a_conflict_and_writes_nothing(
    store: SqlAlchemyMessageStore,
) -> None:
    conv = conversation()
    running = message(conv)
    await store.open_turn(running, conv)

    with pytest.raises(Conflict):
        await store.open_turn(message(conv, T0 + timedelta(minutes=1)), None)

    assert await store.list_messages(conv.id, 0, 10) == [running]
    assert await store.get_conversation(conv.id, ALICE) == conv  # its list entry untouched


async def test_of_forty_turns_opened_at_once_in_one_conversation_exactly_one_runs(
    store: SqlAlchemyMessageStore,
) -> None:
    for _ in range(5):  # a race is lost now and then: a few rounds make a broken guarantee show
        conv = conversation()
        await add_turns(store, conv, [finished(message(conv))])
        turns = [message(conv, T0 + timedelta(minutes=1)) for _ in range(40)]

        outcomes = await asyncio.gather(*(store.open_turn(turn, None) for turn in turns), return_exceptions=True)

        opened = [
            turn for turn, outcome in zip(turns, outcomes, strict=True)
            if isinstance(outcome, Conversation) and outcome.id == conv.id
        ]
        refused = [outcome for outcome in outcomes if isinstance(outcome, Conflict)]
        assert (len(opened), len(refused)) == (1, 39), [type(o).__name__ for o in outcomes]
        stored = await store.list_messages(conv.id, 0, 100)
        assert [m.id for m in stored if m.status is MessageStatus.RUNNING] == [opened[0].id]


async def test_open_turn_with_new_conversation_is_atomic(store: SqlAlchemyMessageStore) -> None:
    taken = conversation()
    first = message(taken)
    await store.open_turn(first, taken)
    fresh = conversation()

    with pytest.raises(StoreUnavailable) as failure:
        await store.open_turn(message(fresh, task_id=first.task_id), fresh)

    assert await store.get_conversation(fresh.id, ALICE) is None
    assert "INSERT" not in failure.value.message
    assert "What is the weather" not in failure.value.message  # user data stays out of errors


async def test_open_turn_on_an_unknown_or_foreign_conversation_writes_nothing(
    store: SqlAlchemyMessageStore,
) -> None:
    conv = conversation()
    await store.open_turn(message(conv), conv)
    stranger = message(conversation())
    assert await store.open_turn(stranger, None) is None
    foreign = replace(message(conv, T0 + timedelta(minutes=2)), owner=OwnerId("mallory"))
    assert await store.open_turn(foreign, None) is None
    assert len(await store.list_messages(conv.id, 0, 10)) == 1


async def test_finish_message_writes_message_and_steps_atomically(store: SqlAlchemyMessageStore) -> None:
    conv = conversation()
    msg = message(conv)
    await store.open_turn(msg, conv)

    with pytest.raises(StoreUnavailable):
        await store.finish_message(finished(msg), [step(msg, 0), step(msg, 1), step(msg, 1)])

    assert await store.get_message(msg.id, ALICE) == msg
    assert await store.list_steps(msg.id) == []


async def test_finish_message_of_unknown_message_raises_not_found(store: SqlAlchemyMessageStore) -> None:
    stray = message(conversation())
    with pytest.raises(NotFound):
        await store.finish_message(finished(stray), [])


# --- history queries ---------------------------------------------------------------------------


async def test_recent_messages_returns_last_completed_turns_oldest_first(
    store: SqlAlchemyMessageStore,
) -> None:
    conv = conversation()
    at = [T0 + timedelta(minutes=i) for i in range(8)]
    turns = [
        finished(message(conv, at[0])),
        finished(message(conv, at[1])),
        finished(message(conv, at[2]), status=MessageStatus.STOP),
        finished(message(conv, at[3])),
        finished(message(conv, at[4]), answer=" \n\t "),  # blank: no answer either
        finished(message(conv, at[4]), answer=""),
        finished(message(conv, at[5]), status=MessageStatus.ERROR),
        finished(message(conv, at[6])),
        message(conv, at[7]),  # still running
    ]
    await add_turns(store, conv, turns)

    assert await store.recent_messages(conv.id, 3) == [turns[1], turns[3], turns[7]]
    assert await store.recent_messages(conv.id, 100) == [turns[0], turns[1], turns[3], turns[7]]
    assert await store.recent_messages(conv.id, 0) == []
    assert await store.recent_messages(conversation().id, 3) == []


async def test_conversation_tail_reads_the_conversation_and_its_last_turns_for_its_owner_only(
    store: SqlAlchemyMessageStore,
) -> None:
    conv = conversation()
    turns = [finished(message(conv, T0 + timedelta(minutes=i))) for i in range(4)]
    await add_turns(store, conv, turns)
    summarised = conv.with_summary("Alice likes Paris.", T0 + timedelta(hours=1))
    await store.save_summary(summarised)

    summarised = replace(summarised, message_count=4, last_active_at=turns[-1].created_at)
    assert await store.conversation_tail(conv.id, ALICE, 2) == (summarised, turns[2:])
    assert await store.conversation_tail(conv.id, ALICE, 0) == (summarised, [])
    assert await store.conversation_tail(conv.id, BOB, 2) is None
    assert await store.conversation_tail(ConversationId("missing"), ALICE, 2) is None


async def test_recent_messages_keeps_insertion_order_for_equal_timestamps(
    store: SqlAlchemyMessageStore,
) -> None:
    conv = conversation()
    turns = [finished(message(conv, T0, query=f"question {i}")) for i in range(5)]
    await add_turns(store, conv, turns)

    assert await store.recent_messages(conv.id, 3) == turns[2:]
    assert await store.list_messages(conv.id, 0, 10) == turns


async def test_list_messages_paginates_all_statuses_oldest_first(store: SqlAlchemyMessageStore) -> None:
    conv = conversation()
    statuses = [MessageStatus.NORMAL, MessageStatus.ERROR, MessageStatus.STOP, MessageStatus.TIMEOUT]
    turns = [finished(message(conv, T0 + timedelta(minutes=i)), status=s) for i, s in enumerate(statuses)]
    turns.append(message(conv, T0 + timedelta(minutes=9)))
    other = conversation()
    await add_turns(store, other, [finished(message(other))])
    # the finished ones inserted newest first (order is by time), the running one last
    await add_turns(store, conv, [*reversed(turns[:4]), turns[4]])

    assert await store.list_messages(conv.id, 0, 2) == turns[0:2]
    assert await store.list_messages(conv.id, 2, 2) == turns[2:4]
    assert await store.list_messages(conv.id, 4, 2) == turns[4:]
    assert await store.list_messages(conv.id, 6, 2) == []
    assert await store.list_messages(conv.id, 0, 0) == []


async def test_recent_messages_reads_the_index_in_a_10000_message_conversation(
    store: SqlAlchemyMessageStore, database: Database  # noqa: F811
) -> None:
    conv = conversation()
    await store.open_turn(message(conv), conv)
    rows = []
    for i in range(1, 10_000):
        turn = message(conv, T0 + timedelta(seconds=i))
        rows.append(message_from_domain(finished(turn) if i % 2 else turn))
    async with database.engine.begin() as connection:
        await connection.execute(insert(MessageRow), [_columns(row) for row in rows])
        if not database.is_sqlite:
            await connection.execute(text("ANALYZE messages"))

    started = time.perf_counter()
    recent = await store.recent_messages(conv.id, 10)
    elapsed = time.perf_counter() - started

    assert [m.id for m in recent] == [r.id for r in rows if r.status == "normal"][-10:]
    assert elapsed < 1.0
    plan = await _plan(database, conv.id)
    assert "ix_messages_conversation_status_created" in plan
    # The index gives the order: no sort step on either backend.
    assert "TEMP B-TREE" not in plan
    assert "Sort" not in plan


def _columns(row: MessageRow) -> dict[str, object]:
    return {c.key: getattr(row, c.key) for c in MessageRow.__table__.columns if c.key != "seq"}


async def _plan(db: Database, conversation_id: ConversationId) -> str:
    query = RECENT_TURNS.params(conversation_id=conversation_id, limit=10)
    sql = str(query.compile(dialect=db.engine.dialect, compile_kwargs={"literal_binds": True}))
    explain = "EXPLAIN QUERY PLAN " if db.is_sqlite else "EXPLAIN "
    async with db.engine.connect() as connection:
        result = await connection.execute(text(explain + sql))
        return "\n".join(" ".join(str(v) for v in row) for row in result)


# --- availability and schema -------------------------------------------------------------------


@pytest.fixture(params=["sqlite", "postgresql"])
def unreachable_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        blocker = tmp_path / "not-a-folder"
        blocker.write_text("a file where the database folder should be")
        return sqlite_url(blocker / "memagent.db")
    return "postgresql+asyncpg://postgres:s3cret-pw@127.0.0.1:1/x"


async def test_a_value_the_database_refuses_is_invalid_input_not_an_unavailable_store(
    store: SqlAlchemyMessageStore, database: Database  # noqa: F811
) -> None:
    nul_id = ConversationId("nul\x00id")
    if database.is_sqlite:  # SQLite stores a NUL in text: the id is simply unknown
        assert await store.get_conversation(nul_id, OwnerId("alice")) is None
        return
    with pytest.raises(InvalidInput, match="^The database refused a value of the request"):  # SQLSTATE 22021
        await store.get_conversation(nul_id, OwnerId("alice"))


async def test_unreachable_database_raises_store_unavailable(
    unreachable_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    db = Database(unreachable_url)  # lazy: constructing it touches nothing
    try:
        with pytest.raises(StoreUnavailable) as at_start:
            await db.start()
        with (
            caplog.at_level(logging.WARNING, "infrastructure.persistence.errors"),
            pytest.raises(StoreUnavailable) as in_use,
        ):
            await SqlAlchemyMessageStore(db).get_conversation(ConversationId("c"), ALICE)
    finally:
        await db.dispose()

    # A client is told the kind of failure only; the log line says where, during what, and why.
    assert in_use.value.message == "The database is unavailable; try again shortly."
    [logged] = [r.getMessage() for r in caplog.records if r.name == "infrastructure.persistence.errors"]
    assert db.display_url in logged
    assert "get_conversation" in logged
    assert "Error" in logged  # the driver's exception class: OperationalError, ConnectionRefusedError…
    assert "s3cret-pw" not in logged

    assert "MEMAGENT_DATABASE__URL" in at_start.value.message
    assert "\n" not in at_start.value.message
    for failure in (at_start.value, in_use.value):
        assert "s3cret-pw" not in failure.message
        assert "Traceback" not in failure.message


def test_run_migrations_on_unreachable_database_names_the_setting() -> None:
    with pytest.raises(StoreUnavailable) as failure:
        run_migrations("postgresql+asyncpg://postgres:s3cret-pw@127.0.0.1:1/x")

    assert "MEMAGENT_DATABASE__URL" in failure.value.message
    assert "s3cret-pw" not in failure.value.message


async def test_unmigrated_postgres_database_asks_for_memagent_migrate(
    pg_unmigrated_database_url: str,  # noqa: F811
) -> None:
    db = Database(pg_unmigrated_database_url)
    try:
        with pytest.raises(DatabaseNotMigrated, match="database is not migrated: run `memagent migrate`"):
            await db.start()
    finally:
        await db.dispose()


async def test_migrated_schema_has_no_drift_from_rows(migrated_url: str) -> None:  # noqa: F811
    db = Database(migrated_url)
    try:
        await db.check_migrated()
        async with db.engine.connect() as connection:
            diffs = await connection.run_sync(
                lambda sync: compare_metadata(MigrationContext.configure(sync), Base.metadata)
            )
    finally:
        await db.dispose()

    assert diffs == []


async def test_embedded_sqlite_schema_is_created_at_head_so_migrate_is_a_no_op(tmp_path: Path) -> None:
    folder = tmp_path / "fresh" / "install"
    db = Database(sqlite_url(folder / "memagent.db"))
    assert not folder.exists()  # constructing does no I/O
    try:
        await db.start()
        await db.check_migrated()
        run_migrations(sqlite_url(folder / "memagent.db"))
        await db.start()  # a second start on an existing file changes nothing
    finally:
        await db.dispose()
