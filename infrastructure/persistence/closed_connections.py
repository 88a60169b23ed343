"""A pooled PostgreSQL connection that is closed, or idle long enough to have died unseen, is
replaced at checkout; a busy one is handed out with no round trip.

SQLAlchemy's `pool_pre_ping` asks the server at every checkout: on asyncpg that is three round
trips (BEGIN, an empty query, ROLLBACK), and a turn checks out four connections on its way to the
model (tests/bench/fixed_cost.py). Here:
- a server that restarts or ends a backend (`pg_terminate_backend`, its idle timeout) says so and
  closes the socket, which asyncpg records (`is_closed()`) as soon as the event loop reads it: such
  a connection is refused at no cost;
- one that dies silently (a NAT or load balancer forgets an idle flow, minutes after its last
  packet) looks open, so a connection idle for longer than `ping_after_idle` is pinged first, as
  `pool_pre_ping` would have, and refused if the ping fails.
A refused connection is replaced by a fresh one: SQLAlchemy's documented `DisconnectionError` from
a checkout listener.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from sqlalchemy import event
from sqlalchemy.exc import DisconnectionError

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine

PING_AFTER_IDLE_S = 10.0
_CHECKED_IN = "memagent_checked_in"  # in the record's `info`, which a replaced connection starts empty


def replace_closed_connections(engine: AsyncEngine, ping_after_idle: float = PING_AFTER_IDLE_S) -> None:
    dialect = engine.dialect

    def checkout(dbapi_connection: Any, record: Any, _proxy: Any) -> None:
        if dbapi_connection.driver_connection.is_closed():
            raise DisconnectionError("the server closed this pooled connection")
        checked_in = record.info.get(_CHECKED_IN)
        if checked_in is not None and time.monotonic() - checked_in >= ping_after_idle:
            try:
                dialect.do_ping(dbapi_connection)
            except Exception as error:  # whatever the ping met, the connection is not usable
                raise DisconnectionError("an idle pooled connection did not answer") from error

    def checkin(_dbapi_connection: Any, record: Any) -> None:
        record.info[_CHECKED_IN] = time.monotonic()

    event.listen(engine.sync_engine, "checkout", checkout)
    event.listen(engine.sync_engine, "checkin", checkin)
