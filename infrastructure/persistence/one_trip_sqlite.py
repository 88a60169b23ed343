"""aiosqlite connections on which a statement crosses to the database thread once.

SQLAlchemy's aiosqlite adapter awaits three calls per statement, four when it returns rows (open a
cursor, execute, fetch the rows, close it), each a round trip to the connection's thread and back
through the event loop. Under load every trip waits for a loop iteration: a turn's dozen statements
cost about 1 ms each (tests/bench/fixed_cost.py). Here the statement runs, its rows are fetched and
its cursor closed in one trip; the cursor SQLAlchemy holds keeps the outcome. So every result is
buffered whole, a streamed one (`stream()`, `yield_per`) too: fine for this app's reads, which are
bounded. aiosqlite's own `Cursor` queues its calls the same way (`Connection._execute`), one trip
per call. A commit or rollback with no transaction open (one that only read: sqlite3 begins one at
the first write) makes no trip; everything else (functions, closing) is aiosqlite's. The
connection's arguments come from the URL alone: an engine's `connect_args` would not reach it.
"""

from __future__ import annotations

import sqlite3
from collections import deque
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

import aiosqlite

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterable, Sequence

    from sqlalchemy.engine import URL


@dataclass(slots=True)
class _Outcome:
    description: Any = None
    rows: deque[Any] = field(default_factory=deque)
    rowcount: int = -1
    lastrowid: int | None = None


def _run(connection: sqlite3.Connection, sql: str, parameters: Any, many: bool) -> _Outcome:
    """On the connection's thread: the statement, all its rows, and its cursor closed."""
    cursor = connection.cursor()
    try:
        if many:
            cursor.executemany(sql, parameters)
        elif parameters is None:
            cursor.execute(sql)
        else:
            cursor.execute(sql, parameters)
        description = cursor.description
        rows = deque(cursor.fetchall()) if description else deque()
        return _Outcome(description, rows, cursor.rowcount, cursor.lastrowid)
    finally:
        cursor.close()


class OneTripCursor:
    """What SQLAlchemy's adapter asks of an aiosqlite cursor, each statement in one trip."""

    arraysize = 1

    def __init__(self, connection: OneTripConnection) -> None:
        self._connection = connection
        self._outcome = _Outcome()

    async def __aenter__(self) -> OneTripCursor:
        return self

    async def __aexit__(self, *_: object) -> None:
        return None

    @property
    def description(self) -> Any:
        return self._outcome.description

    @property
    def rowcount(self) -> int:
        return self._outcome.rowcount

    @property
    def lastrowid(self) -> int | None:
        return self._outcome.lastrowid

    async def execute(self, sql: str, parameters: Iterable[Any] | None = None) -> OneTripCursor:
        self._outcome = await self._connection.run(sql, parameters, many=False)
        return self

    async def executemany(self, sql: str, parameters: Iterable[Iterable[Any]]) -> OneTripCursor:
        self._outcome = await self._connection.run(sql, parameters, many=True)
        return self

    async def fetchall(self) -> list[Any]:
        rows = list(self._outcome.rows)
        self._outcome.rows.clear()
        return rows

    async def fetchone(self) -> Any:
        return self._outcome.rows.popleft() if self._outcome.rows else None

    async def fetchmany(self, size: int | None = None) -> Sequence[Any]:
        rows = self._outcome.rows
        return [rows.popleft() for _ in range(min(self.arraysize if size is None else size, len(rows)))]

    async def __aiter__(self) -> AsyncIterator[Any]:
        while self._outcome.rows:
            yield self._outcome.rows.popleft()

    async def close(self) -> None:
        # Its rowcount and description stay readable, as a closed sqlite3 cursor's do: SQLAlchemy
        # closes a cursor before it reads how many rows an INSERT wrote.
        self._outcome.rows.clear()


class OneTripConnection(aiosqlite.Connection):
    """An aiosqlite connection whose cursors run each statement in one trip (`OneTripCursor`)."""

    def cursor(self) -> OneTripCursor:  # type: ignore[override]  # no trip: the statement opens its own
        return OneTripCursor(self)

    async def commit(self) -> None:
        # sqlite3 begins a transaction at the first write: one that only read has nothing to end.
        if not self._idle():
            await super().commit()

    async def rollback(self) -> None:
        if not self._idle():
            await super().rollback()

    def _idle(self) -> bool:
        """Connected, and no transaction open (read on this thread: no statement of SQLAlchemy's runs
        on the connection while it commits or rolls back)."""
        return self._connection is not None and not self._connection.in_transaction

    async def run(self, sql: str, parameters: Any, *, many: bool) -> _Outcome:
        # aiosqlite's own cursors queue their calls with `_execute`, untyped.
        outcome: _Outcome = await self._execute(_run, self._conn, sql, parameters, many)  # type: ignore[no-untyped-call]
        return outcome


def one_trip_connector(url: URL) -> partial[OneTripConnection]:
    """`create_async_engine`'s `async_creator` for a SQLite URL: its connections, with the arguments
    SQLAlchemy's aiosqlite dialect would give `sqlite3.connect`."""
    args, options = url.get_dialect()().create_connect_args(url)
    return partial(_connection, partial(sqlite3.connect, *args, **options))


def _connection(connector: partial[sqlite3.Connection]) -> OneTripConnection:
    connection = OneTripConnection(connector, iter_chunk_size=64)
    connection._thread.daemon = True  # as SQLAlchemy's dialect does: a forgotten connection never holds up exit
    return connection
