"""Where a marker string is still stored: every column of every table of the service's database
(SQLite file or PostgreSQL database), and every key under the service's Redis prefix (strings,
hashes, lists, sets, sorted sets and streams), read the way an operator would read them.

A test plants a unique marker in what an end user says, forgets the user, and asks these which
places still hold it: nothing in the database's memory and nothing in Redis's memory keys may.
"""

from __future__ import annotations

import asyncio
import sqlite3
from contextlib import closing
from typing import TYPE_CHECKING

import asyncpg
import redis

from tests.integration.backends import pg_dsn

if TYPE_CHECKING:
    from tests.integration.user_memory_world import World


def database_holders(world: World, marker: str) -> set[str]:
    """`table.column` of every column that holds `marker` in some row (case-insensitively)."""
    return _sqlite_holders(world.database, marker) if world.sqlite else _pg_holders(world.database, marker)


def _sqlite_holders(path: str, marker: str) -> set[str]:
    found: set[str] = set()
    with closing(sqlite3.connect(path, timeout=10)) as db:
        tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            for column in [row[1] for row in db.execute(f'PRAGMA table_info("{table}")')]:
                sql = f'SELECT count(*) FROM "{table}" WHERE CAST("{column}" AS TEXT) LIKE ?'  # noqa: S608
                if db.execute(sql, (f"%{marker}%",)).fetchone()[0]:
                    found.add(f"{table}.{column}")
    return found


def _pg_holders(database: str, marker: str) -> set[str]:
    async def scan() -> set[str]:
        connection = await asyncpg.connect(pg_dsn(database), timeout=5)
        try:
            columns = await connection.fetch(
                "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public'"
            )
            found: set[str] = set()
            for table, column in ((c["table_name"], c["column_name"]) for c in columns):
                sql = f'SELECT count(*) FROM "{table}" WHERE "{column}"::text ILIKE $1'  # noqa: S608
                if await connection.fetchval(sql, f"%{marker}%"):
                    found.add(f"{table}.{column}")
            return found
        finally:
            await connection.close()

    return asyncio.run(scan())


def redis_holders(url: str, prefix: str, marker: str) -> set[str]:
    """The keys under `prefix` (without it) whose value holds `marker`, whatever their type."""
    client = redis.Redis.from_url(url)
    try:
        return {key.decode()[len(prefix):] for key in client.scan_iter(match=f"{prefix}*", count=500)
                if marker.encode() in _value(client, key).lower()}
    finally:
        client.close()


def _value(client: redis.Redis, key: bytes) -> bytes:
    """Everything a key holds, as one byte string."""
    kind = client.type(key).decode()
    parts: list[bytes] = []
    if kind == "string":
        parts.append(client.get(key) or b"")
    elif kind == "hash":
        parts.extend(f + b"=" + v for f, v in client.hgetall(key).items())
    elif kind == "list":
        parts.extend(client.lrange(key, 0, -1))
    elif kind == "set":
        parts.extend(client.smembers(key))
    elif kind == "zset":
        parts.extend(client.zrange(key, 0, -1))
    elif kind == "stream":
        parts.extend(f + b"=" + v for _, fields in client.xrange(key) for f, v in fields.items())
    return b"\n".join(parts)
