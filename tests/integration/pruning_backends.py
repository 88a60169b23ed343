"""The backends a prune runs on in the pruning suites: SQLite with the memory cache and event log
in process, or PostgreSQL with Redis (`memory_url`'s two cases), and a `Prune` over them at a fixed
time, `NOW`, 100 days after the World's turns. A test module using `backends` imports the fixtures
it depends on by name: `memory_url`, `memory_db`, `memory_pg_url` and `redis_client`."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import pytest
from sqlalchemy import insert

from application.memory.recorded_memory_store import RecordedMemoryStore
from application.retention.prune import Prune
from domain.retention import BatchLimits, RetentionPolicy
from infrastructure.events.inprocess_event_log import InProcessEventLog
from infrastructure.events.redis_event_log import RedisEventLog
from infrastructure.memory.inprocess_memory_store import InProcessMemoryStore
from infrastructure.memory.redis_memory_store import RedisMemoryStore
from infrastructure.persistence.model_call_rows import ModelCallRow
from infrastructure.persistence.prune_locks import prune_lock
from infrastructure.persistence.recall_matrices import ArchiveMatrix, Matrix, RecallMatrices
from infrastructure.persistence.sqlalchemy_memory_record import SqlAlchemyMemoryRecord
from infrastructure.persistence.sqlalchemy_pruning import SqlAlchemyPruneStore
from infrastructure.persistence.sqlalchemy_recall_index import SqlAlchemyRecallIndex
from tests.fakes import FakeClock
from tests.integration.memory_record_fixtures import T0, World

if TYPE_CHECKING:
    from collections.abc import Hashable

    from application.ports.event_log import EventLog
    from application.ports.memory_store import MemoryStore
    from infrastructure.persistence.database import Database
    from infrastructure.redis_client import RedisClient

DAY = timedelta(days=1)
NOW = T0 + 100 * DAY  # the World's turns are 100 days old; `young` ones 5 days
YOUNG = 95 * 24 * 60  # minutes after T0
POLICY = RetentionPolicy(prompt_snapshots=30 * DAY, steps=90 * DAY, deleted_conversations=30 * DAY,
                         model_calls=400 * DAY, workflow_runs=60 * DAY)


class RecordingMatrices(RecallMatrices):
    """The real matrices, remembering the last recall matrix read from the database."""

    last: Matrix | None = None

    def put(self, key: Hashable, matrix: Matrix | ArchiveMatrix) -> None:
        if isinstance(matrix, Matrix):
            self.last = matrix
        super().put(key, matrix)


@dataclass
class Backends:
    db: Database
    world: World
    memory: MemoryStore
    events: EventLog
    record: SqlAlchemyMemoryRecord
    index: SqlAlchemyRecallIndex
    matrices: RecordingMatrices

    def prune(self, policy: RetentionPolicy = POLICY, size: int = 3, pause: float = 0.0,
              db: Database | None = None) -> Prune:
        database = db or self.db
        return Prune(SqlAlchemyPruneStore(database), prune_lock(database), self.memory, self.events,
                     FakeClock(start=NOW, step=0.0), policy, BatchLimits(size, pause))

    async def scalar(self, query: Any) -> Any:
        async with self.db.transaction("test read") as session:
            return await session.scalar(query)

    async def execute(self, statement: Any) -> None:
        async with self.db.transaction("test write") as session:
            await session.execute(statement)

    async def ledger(self, *days_ago: int) -> None:
        """Rows of the model-call ledger made that many days ago (`call0`, `call1`…)."""
        async with self.db.transaction("test ledger") as session:
            for n, days in enumerate(days_ago):
                await session.execute(insert(ModelCallRow).values(ledger_row(f"call{n}", NOW - days * DAY)))


def ledger_row(call_id: str, created_at: datetime) -> dict[str, object]:
    """Every column of a ledger row: placeholders by type, the ledger's own columns being its
    owner's business; only the id and time matter to retention."""
    placeholders = {str: "x", int: 0, float: 0.0, bool: False, datetime: created_at}
    row = {column.name: placeholders[column.type.python_type] for column in ModelCallRow.__table__.columns
           if not column.nullable}
    return row | {"id": call_id, "created_at": created_at}


@pytest.fixture
def redis_or_none(memory_url: str, request: pytest.FixtureRequest) -> RedisClient | None:
    """Redis beside PostgreSQL; SQLite's cache and logs are in process."""
    return None if memory_url.startswith("sqlite") else request.getfixturevalue("redis_client")


@pytest.fixture
async def backends(memory_db: Database, redis_or_none: RedisClient | None) -> Backends:
    if redis_or_none is None:
        cache: Any = InProcessMemoryStore()
        events: EventLog = InProcessEventLog()
    else:
        cache, events = RedisMemoryStore(redis_or_none), RedisEventLog(redis_or_none)
    record = SqlAlchemyMemoryRecord(memory_db)
    matrices = RecordingMatrices()
    return Backends(memory_db, World(memory_db), RecordedMemoryStore(cache, record), events, record,
                    SqlAlchemyRecallIndex(memory_db, matrices), matrices)
