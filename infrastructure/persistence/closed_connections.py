"""A pooled PostgreSQL connection the server has closed is replaced at checkout, at no round trip.

SQLAlchemy's `pool_pre_ping` would find it by asking the server first: on asyncpg that is three
round trips per checkout (BEGIN, an empty query, ROLLBACK), and a turn checks out four connections
on its way to the model (tests/bench/fixed_cost.py). A server that restarts or ends a backend
(`pg_terminate_backend`, an idle timeout) says so and closes the socket, which asyncpg records
(`is_closed()`) as soon as the event loop reads it: such a connection is refused here, and the pool
opens a fresh one (SQLAlchemy's documented `DisconnectionError` from a checkout listener). A
connection that dies silently (a cut network) fails its first statement instead, and SQLAlchemy
then drops every connection the pool held before it, as a ping would have left it hanging anyway.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlalchemy import event
from sqlalchemy.exc import DisconnectionError

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine


def replace_closed_connections(engine: AsyncEngine) -> None:
    event.listen(engine.sync_engine, "checkout", _refuse_closed)


def _refuse_closed(dbapi_connection: Any, _record: Any, _proxy: Any) -> None:
    if dbapi_connection.driver_connection.is_closed():
        raise DisconnectionError("the server closed this pooled connection")
