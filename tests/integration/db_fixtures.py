"""Databases for the MessageStore contract suite: a temp SQLite file, and throwaway PostgreSQL databases.

PostgreSQL is the server at 127.0.0.1:5432 (user postgres, trust auth), overridable with
MEMAGENT_TEST_POSTGRES_URL. Each test session creates `memagent_test_<hex>` databases, migrates
one with Alembic, and drops them at the end. When the server cannot be reached, the PostgreSQL
cases are skipped with the reason, and the SQLite cases still run.
"""

from __future__ import annotations

import asyncio
import os
import secrets
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import asyncpg
import pytest
from sqlalchemy import text
from sqlalchemy.engine import URL, make_url

from infrastructure.persistence.database import Database
from infrastructure.persistence.migrate import run_migrations

POSTGRES_SERVER = make_url(
    os.environ.get("MEMAGENT_TEST_POSTGRES_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/postgres")
)
SQLITE = "sqlite"
POSTGRESQL = "postgresql"
BACKENDS = [SQLITE, POSTGRESQL]


def _plain_dsn(url: URL) -> str:
    return url.set(drivername="postgresql").render_as_string(hide_password=False)


def _admin(statement: str) -> None:
    """Run one statement on the server's maintenance database (outside any event loop)."""

    async def run() -> None:
        connection = await asyncpg.connect(_plain_dsn(POSTGRES_SERVER), timeout=5)
        try:
            await connection.execute(statement)
        finally:
            await connection.close()

    asyncio.run(run())


def _throwaway_database() -> tuple[str, str]:
    name = f"memagent_test_{secrets.token_hex(6)}"
    try:
        _admin(f'CREATE DATABASE "{name}"')
    except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, TimeoutError) as exc:
        pytest.skip(f"PostgreSQL not reachable at {POSTGRES_SERVER.render_as_string()}: {exc}")
    return name, POSTGRES_SERVER.set(database=name).render_as_string(hide_password=False)


@pytest.fixture(scope="session")
def pg_database_url() -> Iterator[str]:
    """A fresh PostgreSQL database migrated to head, for the whole session."""
    name, url = _throwaway_database()
    try:
        run_migrations(url)
        yield url
    finally:
        _admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def pg_unmigrated_database_url() -> Iterator[str]:
    """A fresh, empty PostgreSQL database that nobody migrated."""
    name, url = _throwaway_database()
    try:
        yield url
    finally:
        _admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def sqlite_url(path: Path) -> str:
    return f"sqlite+aiosqlite:///{path}"


@pytest.fixture(params=BACKENDS)
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The URL of an empty, ready schema: SQLite in a folder that does not exist yet, or migrated PG."""
    if request.param == SQLITE:
        return sqlite_url(tmp_path / "data" / "memagent.db")
    return str(request.getfixturevalue("pg_database_url"))


@pytest.fixture(params=BACKENDS)
def migrated_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A database whose schema Alembic built (not create_all)."""
    if request.param == SQLITE:
        url = sqlite_url(tmp_path / "migrated" / "memagent.db")
        run_migrations(url)
        return url
    return str(request.getfixturevalue("pg_database_url"))


FAKE = "fake"


@pytest.fixture(params=[*BACKENDS, FAKE])
def url_or_fake(request: pytest.FixtureRequest, tmp_path: Path) -> str | None:
    """`database_url`'s, or None for the case that runs the port's in-process fake, so that a
    contract suite runs the fake once and none of its cases is a skip."""
    if request.param == FAKE:
        return None
    if request.param == SQLITE:
        return sqlite_url(tmp_path / "data" / "memagent.db")
    return str(request.getfixturevalue("pg_database_url"))


@pytest.fixture
async def database(database_url: str) -> AsyncIterator[Database]:
    """A started Database; PostgreSQL tables are emptied afterwards since the database is shared."""
    database = Database(database_url)
    await database.start()
    try:
        yield database
    finally:
        if not database.is_sqlite:
            async with database.engine.begin() as connection:
                await connection.execute(
                    text("TRUNCATE message_agent_thoughts, messages, conversations RESTART IDENTITY")
                )
        await database.dispose()
