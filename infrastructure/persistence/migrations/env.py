"""Alembic environment for memagent, async-capable.

Run through `infrastructure.persistence.migrate`: the URL, or an already open sync
connection, arrives in `config.attributes`; there is no alembic.ini to read it from.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from alembic import context
from sqlalchemy import pool
from sqlalchemy.ext.asyncio import create_async_engine

from infrastructure.persistence.rows import Base
from infrastructure.persistence.urls import connect_args

if TYPE_CHECKING:
    from sqlalchemy.engine import URL, Connection
    from sqlalchemy.ext.asyncio import AsyncConnection

config = context.config
target_metadata = Base.metadata


def _url() -> URL:
    url = config.attributes.get("url")
    if url is None:
        raise RuntimeError("run migrations through infrastructure.persistence.migrate.run_migrations(url)")
    return url  # type: ignore[no-any-return]


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        # SQLite cannot ALTER most things; batch mode copies the table instead.
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()


# Several `memagent migrate` at once (containers started together) take turns: a session lock,
# released when the connection closes; the later ones find the schema at head. It is tried, not
# waited for, with no transaction open in between: CREATE INDEX CONCURRENTLY in the one migrating
# waits for every open transaction, a waiting one too, which would be a deadlock.
MIGRATION_LOCK = 0x6D656D61  # "mema"
LOCK_RETRY_SECONDS = 0.2


async def _take_turns(connection: AsyncConnection) -> None:
    while not (await connection.exec_driver_sql(f"SELECT pg_try_advisory_lock({MIGRATION_LOCK})")).scalar():
        await connection.rollback()
        await asyncio.sleep(LOCK_RETRY_SECONDS)
    await connection.commit()  # the lock is the session's: it outlives this transaction


async def _run_async(url: URL) -> None:
    engine = create_async_engine(url, poolclass=pool.NullPool, connect_args=connect_args(url))
    try:
        async with engine.connect() as connection:
            if connection.dialect.name == "postgresql":
                await _take_turns(connection)
            await connection.run_sync(_run)
    finally:
        await engine.dispose()


def _run_offline(url: URL) -> None:
    context.configure(url=url, target_metadata=target_metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    _run_offline(_url())
elif (shared := config.attributes.get("connection")) is not None:
    _run(shared)
else:
    asyncio.run(_run_async(_url()))
