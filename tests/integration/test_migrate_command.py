"""`memagent migrate`: builds the schema of a fresh PostgreSQL database, is harmless when run
again, and leaves a database that `memagent serve` accepts."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from infrastructure.persistence.migrate import script_directory
from infrastructure.persistence.rows import Base
from tests.integration.backends import chat, memagent, pg_query, pg_url, serving, throwaway_pg_database
from tests.integration.db_fixtures import sqlite_url

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
