"""The database a MessageStore runs on: a lazy async engine and its sessions."""

from __future__ import annotations

import asyncio
from contextlib import asynccontextmanager, contextmanager
from typing import TYPE_CHECKING, Any

from alembic import command
from alembic.runtime.migration import MigrationContext
from sqlalchemy import event
from sqlalchemy.ext.asyncio import (
    AsyncConnection,
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)

from application.errors import StoreUnavailable
from infrastructure.errors import DatabaseNotMigrated
from infrastructure.persistence import (  # noqa: F401 - register their tables on Base
    agent_rows,
    knowledge_rows,
    memory_rows,
    model_call_rows,
    workflow_rows,
    workflow_run_rows,
)
from infrastructure.persistence.closed_connections import PING_AFTER_IDLE_S, replace_closed_connections
from infrastructure.persistence.errors import (
    DATABASE_ERRORS,
    MIGRATE_HINT,
    URL_SETTING,
    safe_url,
    startup_failure_message,
    store_error,
)
from infrastructure.persistence.migrate import alembic_config, script_directory
from infrastructure.persistence.one_trip_sqlite import one_trip_connector
from infrastructure.persistence.rows import Base
from infrastructure.persistence.urls import connect_args, ensure_sqlite_directory, is_sqlite, normalise_url

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Coroutine, Iterator

    from sqlalchemy.engine import URL, Connection

    from application.ports.store_metrics import StoreMetrics


class Database:
    """One database URL, its engine and session factory.

    Constructing it does no I/O, so the DI container can build it eagerly; the engine is
    created on first use or in `start()`, which also checks the schema once at start-up.
    """

    def __init__(
        self,
        url: str | URL,
        *,
        echo: bool = False,
        connect_timeout: float = 10.0,
        pool_size: int = 20,
        max_overflow: int = 20,
        metrics: StoreMetrics | None = None,
        ping_after_idle: float = PING_AFTER_IDLE_S,
    ) -> None:
        """`metrics` counts each transaction the database failed (`store_error("database")`);
        a PostgreSQL connection idle for `ping_after_idle` seconds is pinged before it is used again."""
        self._url = normalise_url(url)
        self._echo = echo
        self._connect_timeout = connect_timeout
        self._pool_size = pool_size
        self._max_overflow = max_overflow
        self._metrics = metrics
        self._ping_after_idle = ping_after_idle
        self._engine: AsyncEngine | None = None
        self._sessions: async_sessionmaker[AsyncSession] | None = None

    @property
    def url(self) -> URL:
        return self._url

    @property
    def display_url(self) -> str:
        return safe_url(self._url)

    @property
    def password(self) -> str | None:
        return str(self._url.password) if self._url.password else None

    @property
    def is_sqlite(self) -> bool:
        return is_sqlite(self._url)

    @property
    def engine(self) -> AsyncEngine:
        if self._engine is None:
            self._engine = self._create_engine()
        return self._engine

    @property
    def sessions(self) -> async_sessionmaker[AsyncSession]:
        if self._sessions is None:
            # Loaded rows stay readable after commit: they are mapped to domain objects afterwards.
            self._sessions = async_sessionmaker(self.engine, expire_on_commit=False)
        return self._sessions

    @asynccontextmanager
    async def transaction(self, operation: str) -> AsyncIterator[AsyncSession]:
        """One transaction (a unit of work), committed on success; a database failure is raised
        as `StoreUnavailable` naming `operation`, without the password (`InvalidInput` when the
        database refused a value)."""
        with self._failures(operation):
            async with self.sessions.begin() as session:
                yield session

    @asynccontextmanager
    async def connection(self, operation: str) -> AsyncIterator[AsyncConnection]:
        """One transaction on a Core connection, failing as `transaction` does. For a turn's own
        statements, which need no unit of work: they skip the session's execution path, and a turn's
        server CPU fell with it and the pings gone (tests/bench/fixed_cost.py, docs/benchmarks.md)."""
        with self._failures(operation):
            async with self.engine.connect() as connection:
                transaction = await connection.begin()
                yield connection  # raised through: closing the connection rolls the transaction back
                await run_to_completion(transaction.commit())

    async def start(self) -> None:
        """Connect once and make sure the schema is there: created for SQLite, checked for others.

        Raises `StoreUnavailable` (or `DatabaseNotMigrated`) with one line naming the setting.
        """
        if self.is_sqlite:
            await self.create_schema()
        else:
            await self.check_migrated()

    async def create_schema(self) -> None:
        """Embedded SQLite: create the tables directly and record them as migrated to head."""
        with self._startup_errors():
            async with self.engine.begin() as connection:
                await connection.run_sync(_create_or_upgrade)

    async def check_migrated(self) -> None:
        """Raise `DatabaseNotMigrated` unless the schema is at the migrations' head."""
        with self._startup_errors():
            async with self.engine.connect() as connection:
                current = await connection.run_sync(_current_heads)
        expected = set(script_directory().get_heads())
        if current != expected:
            found = ", ".join(sorted(current)) or "none"
            raise DatabaseNotMigrated(
                f"{MIGRATE_HINT} (revision {found}, expected {', '.join(sorted(expected))};"
                f" {URL_SETTING}={self.display_url})"
            )

    async def dispose(self) -> None:
        if self._engine is not None:
            await self._engine.dispose()
        self._engine = None
        self._sessions = None

    @contextmanager
    def _failures(self, operation: str) -> Iterator[None]:
        try:
            yield
        except DATABASE_ERRORS as exc:
            failure = store_error(operation, exc, self.password, where=f"The database at {self.display_url}")
            if self._metrics is not None and isinstance(failure, StoreUnavailable):  # not a value it refused
                self._metrics.store_error("database")
            raise failure from exc

    @contextmanager
    def _startup_errors(self) -> Iterator[None]:
        try:
            yield
        except DATABASE_ERRORS as exc:
            raise StoreUnavailable(startup_failure_message(self._url, exc)) from exc

    def _create_engine(self) -> AsyncEngine:
        if self.is_sqlite:
            ensure_sqlite_directory(self._url)
            engine = create_async_engine(
                self._url, echo=self._echo, pool_reset_on_return=None, async_creator=one_trip_connector(self._url)
            )
            event.listen(engine.sync_engine, "connect", _sqlite_on_connect)
            return engine
        engine = create_async_engine(
            self._url,
            echo=self._echo,
            # Every running turn holds a connection only for its short transactions, but a burst of
            # turns starting at once would otherwise open and close overflow connections each time.
            pool_size=self._pool_size,
            max_overflow=self._max_overflow,
            connect_args=connect_args(self._url, self._connect_timeout),
        )
        # Survive a database restart without failing the next request, and without a ping per checkout.
        replace_closed_connections(engine, self._ping_after_idle)
        return engine


async def run_to_completion(step: Coroutine[Any, Any, None]) -> None:
    """`step` run to its end even if the caller is cancelled meanwhile (the cancellation is raised
    after it), as a session's commit is: asyncpg asks the server to cancel a command whose caller
    was cancelled, so a commit cut off halfway would leave a turn's save unknown."""
    task = asyncio.ensure_future(step)
    cancelled: asyncio.CancelledError | None = None
    while not task.done():
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError as error:
            cancelled = error
    task.result()
    if cancelled is not None:
        raise cancelled


def _sqlite_on_connect(dbapi_connection: Any, _record: Any) -> None:
    # SQLite leaves foreign keys off per connection. WAL lets readers run beside the one writer;
    # NORMAL sync is durable enough in WAL mode; busy_timeout waits for that writer instead of failing.
    cursor = dbapi_connection.cursor()
    for pragma in ("foreign_keys=ON", "journal_mode=WAL", "synchronous=NORMAL", "busy_timeout=5000"):
        cursor.execute(f"PRAGMA {pragma}")
    cursor.close()


def _current_heads(connection: Connection) -> set[str]:
    return set(MigrationContext.configure(connection).get_current_heads())


def _create_or_upgrade(connection: Connection) -> None:
    # A fresh file gets the tables in one go and is stamped at head, so that `memagent migrate`
    # and later revisions see it as migrated; a file stamped at an older revision is upgraded.
    context = MigrationContext.configure(connection)
    heads = set(script_directory().get_heads())
    current = set(context.get_current_heads())
    if not current:
        Base.metadata.create_all(connection)
        context.stamp(script_directory(), "heads")
    elif current != heads:
        command.upgrade(alembic_config(connection=connection), "heads")
