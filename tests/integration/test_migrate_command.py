"""`memagent migrate`: builds the schema of a fresh PostgreSQL database, is harmless when run
again, and leaves a database that `memagent serve` accepts."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from alembic import command

from domain.ids import ConversationId, MessageId, OwnerId
from infrastructure.persistence.database import Database
from infrastructure.persistence.migrate import alembic_config, script_directory
from infrastructure.persistence.rows import Base
from infrastructure.persistence.sqlalchemy_message_store import SqlAlchemyMessageStore
from infrastructure.persistence.urls import normalise_url
from tests.integration.backends import chat, memagent, pg_query, pg_url, serving, throwaway_pg_database
from tests.integration.db_fixtures import sqlite_url
from tests.service import ROOT, service_env

pytestmark = pytest.mark.integration

# Every table the rows declare, plus Alembic's own.
TABLES = set(Base.metadata.tables) | {"alembic_version"}


@pytest.fixture
def fresh_database() -> Iterator[str]:
    with throwaway_pg_database() as name:
        yield name


def tables(database: str) -> set[str]:
    rows = pg_query(database, "SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
    return {row["tablename"] for row in rows}


def revision(database: str) -> set[str]:
    return {row["version_num"] for row in pg_query(database, "SELECT version_num FROM alembic_version")}


def test_migrate_builds_a_fresh_database_twice_harmlessly_and_serve_then_starts(
    fresh_database: str, tmp_path: Path
) -> None:
    env = {"MEMAGENT_DATABASE__URL": pg_url(fresh_database)}
    assert tables(fresh_database) == set()
    assert {"conversations", "messages", "message_agent_thoughts"} <= TABLES

    first = memagent(["migrate"], env)
    assert first.returncode == 0, first.stderr
    assert "database is up to date" in first.stdout
    assert tables(fresh_database) == TABLES
    head = set(script_directory().get_heads())
    assert revision(fresh_database) == head

    with serving(env, tmp_path) as (_, client):
        kept = chat(client, "Written before the second migrate.")

    again = memagent(["migrate"], env)
    assert again.returncode == 0, again.stderr
    assert "database is up to date" in again.stdout
    assert "Traceback" not in again.stdout + again.stderr
    assert tables(fresh_database) == TABLES
    assert revision(fresh_database) == head
    rows = pg_query(fresh_database, "SELECT query, status FROM messages WHERE id = $1", kept["message_id"])
    assert [(r["query"], r["status"]) for r in rows] == [("Written before the second migrate.", "normal")]


def test_migrates_started_together_on_an_empty_database_take_turns_and_all_succeed(fresh_database: str) -> None:
    command_line = [sys.executable, "-m", "interfaces.cli.main", "migrate"]
    env = service_env({"MEMAGENT_DATABASE__URL": pg_url(fresh_database)})
    runs = [subprocess.Popen(command_line, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(3)]
    outcomes = [(run.wait(timeout=120), run.communicate()) for run in runs]
    assert [code for code, _ in outcomes] == [0, 0, 0], [err for _, (_, err) in outcomes]
    assert tables(fresh_database) == TABLES
    assert revision(fresh_database) == set(script_directory().get_heads())


def test_migrate_creates_an_sqlite_file_and_its_folder(tmp_path: Path) -> None:
    path = tmp_path / "new" / "folder" / "memagent.db"
    done = memagent(["migrate"], {"MEMAGENT_DATABASE__URL": sqlite_url(path)})
    assert done.returncode == 0, done.stderr
    assert path.is_file()


def test_migrate_on_an_unreachable_database_says_which_setting_in_one_line() -> None:
    done = memagent(["migrate"], {"MEMAGENT_DATABASE__URL": "postgresql+asyncpg://postgres:pw-x1@127.0.0.1:1/x"})
    output = done.stdout + done.stderr
    assert done.returncode != 0
    assert "Traceback" not in output
    assert "pw-x1" not in output
    reasons = [line for line in done.stderr.splitlines() if line.startswith("memagent: migration failed:")]
    assert len(reasons) == 1, output
    assert "MEMAGENT_DATABASE__URL" in reasons[0]


# --- upgrading a database of revision 0003 (before agents as data) --------------------------------

T0 = datetime(2026, 1, 1, tzinfo=UTC)
_OLD_CONVERSATION = (
    "INSERT INTO conversations (id, app_id, owner, summary, created_at, updated_at) VALUES ({})"
)
_OLD_MESSAGE = (
    "INSERT INTO messages (id, conversation_id, owner, task_id, query, image_urls, answer, status, error, prompt,"
    " prompt_tokens, completion_tokens, total_price, latency, created_at, updated_at) VALUES ({})"
)


def _migrate_to_0003(url: str) -> None:
    command.upgrade(alembic_config(normalise_url(url)), "0003")


def _downgrade_to_0003(url: str) -> None:
    command.downgrade(alembic_config(normalise_url(url)), "0003")


def test_migrate_upgrades_a_0003_postgresql_database_and_keeps_its_turns(fresh_database: str) -> None:
    url = pg_url(fresh_database)
    _migrate_to_0003(url)
    assert revision(fresh_database) == {"0003"}
    pg_query(fresh_database, _OLD_CONVERSATION.format("'c1', 'helper', 'alice', '', $1, $1"), T0)
    pg_query(
        fresh_database,
        _OLD_MESSAGE.format("'m1', 'c1', 'alice', 't1', 'Hi?', '[]'::jsonb, 'Hello.', 'normal', '', '', 1, 2, 0, 0.5,"
                            " $1, $1"),
        T0,
    )

    done = memagent(["migrate"], {"MEMAGENT_DATABASE__URL": url})

    assert done.returncode == 0, done.stderr
    assert revision(fresh_database) == set(script_directory().get_heads())
    assert tables(fresh_database) == TABLES
    [conversation] = pg_query(fresh_database, "SELECT is_debug FROM conversations WHERE id = 'c1'")
    assert conversation["is_debug"] is False
    [message] = pg_query(fresh_database, "SELECT agent_version, draft_revision, entry_point, answer FROM messages")
    assert dict(message) == {"agent_version": None, "draft_revision": None, "entry_point": "api", "answer": "Hello."}


async def test_an_embedded_sqlite_file_at_0003_is_upgraded_at_start_and_keeps_its_turns(tmp_path: Path) -> None:
    path = tmp_path / "old" / "memagent.db"
    path.parent.mkdir()
    await asyncio.to_thread(_migrate_to_0003, sqlite_url(path))  # env.py runs its own event loop
    at = "2026-01-01 00:00:00.000000"
    with sqlite3.connect(path) as connection:
        connection.execute(_OLD_CONVERSATION.format("'c1', 'helper', 'alice', '', ?, ?"), (at, at))
        values = "'m1', 'c1', 'alice', 't1', 'Hi?', '[]', 'Hello.', 'normal', '', '', 1, 2, 0, 0.5, ?, ?"
        connection.execute(_OLD_MESSAGE.format(values), (at, at))
    connection.close()

    db = Database(sqlite_url(path))
    try:
        await db.start()
        await db.check_migrated()
        store = SqlAlchemyMessageStore(db)
        conversation = await store.get_conversation(ConversationId("c1"), OwnerId("alice"))
        message = await store.get_message(MessageId("m1"), OwnerId("alice"))
    finally:
        await db.dispose()

    assert conversation is not None
    assert conversation.is_debug is False
    assert message is not None
    assert (message.answer, message.created_at) == ("Hello.", T0)
    assert (message.agent_version, message.draft_revision, message.entry_point) == (None, None, "api")
    # Neither way may SQLite copy a table: dropping the old one would cascade to every message.
    await asyncio.to_thread(_downgrade_to_0003, sqlite_url(path))
    with sqlite3.connect(path) as connection:
        assert connection.execute("SELECT id, answer FROM messages").fetchall() == [("m1", "Hello.")]
        assert connection.execute("SELECT version_num FROM alembic_version").fetchall() == [("0003",)]
    connection.close()
