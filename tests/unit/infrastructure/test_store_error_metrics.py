"""A backing store's failures reach the metrics (`memagent_store_errors_total{store}`) where the
adapters translate them: the database's transactions, and Redis by the store it holds."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy.exc
from redis.exceptions import ConnectionError as RedisConnectionError

from application.errors import (
    ApplicationError,
    EventStoreUnavailable,
    InvalidInput,
    MemoryUnavailable,
    StoreUnavailable,
)
from infrastructure.metrics.inprocess_metrics import InProcessMetrics
from infrastructure.persistence.database import Database
from infrastructure.redis_client import RedisClient


@pytest.mark.parametrize("kind", ["transaction", "connection"])
async def test_a_transaction_the_database_fails_counts_and_a_value_it_refuses_does_not(
    tmp_path: Path, kind: str
) -> None:
    metrics = InProcessMetrics()
    database = Database(f"sqlite+aiosqlite:///{tmp_path / 'm.db'}", metrics=metrics)
    begin = getattr(database, kind)  # a session's transaction, or a Core connection's
    try:
        with pytest.raises(StoreUnavailable):
            async with begin("saving a turn"):
                raise ConnectionRefusedError(111, "Connection refused")
        with pytest.raises(InvalidInput):
            async with begin("saving a turn"):
                raise sqlalchemy.exc.DataError("INSERT", {}, ValueError("a NUL in text"))
    finally:
        await database.dispose()
    assert metrics.of("store_error") == [("database",)]


@pytest.mark.parametrize(
    ("error", "store"), [(EventStoreUnavailable, "event_store"), (MemoryUnavailable, "memory_store"),
                         (ApplicationError, "redis")],
)
def test_a_redis_failure_counts_under_the_store_it_failed(error: type[ApplicationError], store: str) -> None:
    metrics = InProcessMetrics()
    client = RedisClient("redis://127.0.0.1:1/0", metrics=metrics)
    with pytest.raises(error), client.translate(error, "appending an event"):
        raise RedisConnectionError("Connection refused.")
    assert metrics.of("store_error") == [(store,)]
