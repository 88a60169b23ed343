"""PruneLock: one prune at a time. On PostgreSQL a session advisory lock, tried without waiting, on
a connection of its own held for the prune (in autocommit, so it holds no transaction open: a
long prune would otherwise keep vacuum from the rows it removes); a worker that dies drops its
connection and so the lock. Embedded SQLite serves one process: a lock in this process."""

from __future__ import annotations

from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from typing import TYPE_CHECKING

from sqlalchemy import func, select

from application.ports.pruning import PruneLock
from infrastructure.persistence.errors import DATABASE_ERRORS, store_error

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator

    from sqlalchemy.ext.asyncio import AsyncConnection

    from infrastructure.persistence.database import Database

# The advisory lock's key: "memprune" as a 64-bit number, apart from memory's hashtext() keys.
PRUNE_LOCK_KEY = int.from_bytes(b"memprune", "big")


class InProcessPruneLock(PruneLock):
    def __init__(self) -> None:
        self._held = False

    @asynccontextmanager
    async def exclusive(self) -> AsyncIterator[bool]:
        if self._held:
            yield False
            return
        self._held = True
        try:
            yield True
        finally:
            self._held = False


class AdvisoryPruneLock(PruneLock):
    def __init__(self, database: Database) -> None:
        self._db = database

    @asynccontextmanager
    async def exclusive(self) -> AsyncIterator[bool]:
        async with AsyncExitStack() as stack:
            with self._errors("take the prune lock"):
                connection = await stack.enter_async_context(self._db.engine.connect())
                autocommit = await connection.execution_options(isolation_level="AUTOCOMMIT")
                held = await _call(autocommit, func.pg_try_advisory_lock(PRUNE_LOCK_KEY))
            try:
                yield held
            finally:
                if held:
                    with self._errors("release the prune lock"):
                        await _call(autocommit, func.pg_advisory_unlock(PRUNE_LOCK_KEY))

    @contextmanager
    def _errors(self, operation: str) -> Iterator[None]:
        """Only the lock's own calls: what the prune itself raises passes through unchanged."""
        try:
            yield
        except DATABASE_ERRORS as exc:
            where = f"The database at {self._db.display_url}"
            raise store_error(operation, exc, self._db.password, where=where) from exc


async def _call(connection: AsyncConnection, function: object) -> bool:
    return bool(await connection.scalar(select(function)))  # type: ignore[call-overload]


def prune_lock(database: Database) -> PruneLock:
    return InProcessPruneLock() if database.is_sqlite else AdvisoryPruneLock(database)
