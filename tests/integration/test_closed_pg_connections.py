"""A pooled PostgreSQL connection the server closed is replaced before a transaction gets it, and a
live one is handed out again as it is, with no ping (closed_connections.py)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import asyncpg
import pytest
from sqlalchemy import text

from infrastructure.persistence.database import Database
from tests.integration.db_fixtures import POSTGRES_SERVER, _plain_dsn, pg_database_url  # noqa: F401

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

pytestmark = pytest.mark.integration

BACKEND = text("SELECT pg_backend_pid()")


@pytest.fixture
async def database(pg_database_url: str) -> AsyncIterator[Database]:  # noqa: F811 - the imported fixture
    database = Database(pg_database_url, pool_size=1, max_overflow=0)
    yield database
    await database.dispose()


async def backend_of(database: Database) -> int:
    async with database.transaction("read the backend") as session:
        return int((await session.execute(BACKEND)).scalar_one())


async def terminate(pid: int) -> None:
    admin = await asyncpg.connect(_plain_dsn(POSTGRES_SERVER))
    try:
        assert await admin.fetchval("SELECT pg_terminate_backend($1)", pid)
    finally:
        await admin.close()


async def test_a_connection_the_server_ended_is_replaced_and_the_next_transaction_succeeds(database: Database) -> None:
    ended = await backend_of(database)
    await terminate(ended)
    await asyncio.sleep(0.2)  # the server's goodbye reaches the idle pooled connection
    assert await backend_of(database) != ended


async def sent_by_a_transaction(database: Database) -> tuple[int, list[str]]:
    """The backend of the pool's one connection and what the next transaction on it sent."""
    sent: list[str] = []
    async with database.engine.connect() as connection:
        driver = (await connection.get_raw_connection()).driver_connection
        assert driver is not None
        driver.add_query_logger(lambda record: sent.append(record.query))
    return await backend_of(database), sent


async def test_a_live_pooled_connection_is_used_again_without_a_ping(database: Database) -> None:
    first = await backend_of(database)
    assert await sent_by_a_transaction(database) == (first, ["BEGIN;", "COMMIT;"])  # no "BEGIN;", ";", "ROLLBACK;"


async def test_a_connection_idle_past_the_limit_is_pinged_before_it_is_used_again(pg_database_url: str) -> None:  # noqa: F811
    database = Database(pg_database_url, pool_size=1, max_overflow=0, ping_after_idle=0.0)
    try:
        first = await backend_of(database)
        backend, sent = await sent_by_a_transaction(database)
    finally:
        await database.dispose()
    assert (backend, sent[:3]) == (first, ["BEGIN;", ";", "ROLLBACK;"])  # the ping, then the transaction
