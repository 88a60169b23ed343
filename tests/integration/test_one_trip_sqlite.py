"""SQLite connections that run each statement in one trip to the database thread answer SQLAlchemy
as aiosqlite's do: rows, rows matched, new row ids, many rows at once, errors, transactions; and
they make one trip a statement, none for a commit that has nothing to end."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from infrastructure.persistence.database import Database
from infrastructure.persistence.one_trip_sqlite import OneTripConnection, one_trip_connector

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

pytestmark = pytest.mark.integration

ITEMS = sa.Table("items", sa.MetaData(), sa.Column("id", sa.Integer, primary_key=True), sa.Column("name", sa.Text))


@pytest.fixture
async def engine(tmp_path: Path) -> AsyncIterator[AsyncEngine]:
    url = make_url(f"sqlite+aiosqlite:///{tmp_path / 'one_trip.db'}")
    engine = create_async_engine(url, async_creator=one_trip_connector(url))
    async with engine.begin() as connection:
        await connection.run_sync(ITEMS.metadata.create_all)
    yield engine
    await engine.dispose()


class CountedTrips:
    """The connection's queue to its thread, counting what is put on it."""

    def __init__(self, queue: Any) -> None:
        self.queue, self.trips = queue, 0

    def put_nowait(self, item: Any) -> None:
        self.trips += 1
        self.queue.put_nowait(item)


async def test_a_statement_takes_one_trip_and_a_transaction_that_only_read_commits_without_one(
    engine: AsyncEngine,
) -> None:
    async with engine.connect() as connection:
        raw = (await connection.get_raw_connection()).driver_connection
        assert isinstance(raw, OneTripConnection)
        counted = raw._tx = CountedTrips(raw._tx)
        try:
            await connection.execute(sa.select(ITEMS.c.name))
            await connection.commit()
            assert counted.trips == 1
            await connection.execute(ITEMS.insert().values(name="kept"))
            await connection.commit()
            assert counted.trips == 3
            await connection.execute(ITEMS.insert().values(name="undone"))
            await connection.rollback()
            assert counted.trips == 5
        finally:
            raw._tx = counted.queue
    async with engine.connect() as connection:
        assert (await connection.execute(sa.select(ITEMS.c.name))).scalars().all() == ["kept"]


async def test_rows_come_back_whole_and_in_order(engine: AsyncEngine) -> None:
    async with engine.begin() as connection:
        await connection.execute(ITEMS.insert(), [{"name": f"n{i}"} for i in range(200)])
        rows = (await connection.execute(sa.select(ITEMS.c.name).order_by(ITEMS.c.id))).scalars().all()
    assert rows == [f"n{i}" for i in range(200)]


async def test_an_update_reports_the_rows_it_matched(engine: AsyncEngine) -> None:
    async with engine.begin() as connection:
        await connection.execute(ITEMS.insert(), [{"name": "a"}, {"name": "a"}, {"name": "b"}])
        matched = await connection.execute(ITEMS.update().where(ITEMS.c.name == "a").values(name="c"))
        none = await connection.execute(ITEMS.delete().where(ITEMS.c.name == "zz"))
    assert (matched.rowcount, none.rowcount) == (2, 0)


async def test_an_insert_gives_its_new_id_and_returning_gives_its_rows(engine: AsyncEngine) -> None:
    async with engine.begin() as connection:
        first = await connection.execute(ITEMS.insert().values(name="a"))
        second = await connection.execute(ITEMS.insert().values(name="b").returning(ITEMS.c.id, ITEMS.c.name))
        assert first.inserted_primary_key == (1,)
        assert second.all() == [(2, "b")]


async def test_a_rolled_back_transaction_leaves_nothing(engine: AsyncEngine) -> None:
    async with engine.connect() as connection:
        await connection.execute(ITEMS.insert().values(name="gone"))
        await connection.rollback()
    async with engine.connect() as connection:
        assert (await connection.execute(sa.select(sa.func.count()).select_from(ITEMS))).scalar() == 0


async def test_a_failing_statement_raises_sqlalchemys_error_and_the_connection_goes_on(engine: AsyncEngine) -> None:
    async with engine.connect() as connection:
        with pytest.raises(sa.exc.OperationalError, match="no such table"):
            await connection.execute(sa.text("SELECT * FROM missing"))
        await connection.rollback()
        assert (await connection.execute(sa.text("SELECT 1"))).scalar() == 1


async def test_rows_can_be_streamed_in_parts(engine: AsyncEngine) -> None:
    async with engine.begin() as connection:
        await connection.execute(ITEMS.insert(), [{"name": f"n{i}"} for i in range(10)])
    async with engine.connect() as connection:
        streamed = await connection.stream(sa.select(ITEMS.c.name).order_by(ITEMS.c.id))
        parts = [[name for (name,) in part] async for part in streamed.partitions(4)]
        one_by_one = await connection.stream(sa.select(ITEMS.c.name).order_by(ITEMS.c.id))
        first, rest = await one_by_one.fetchone(), [name async for (name,) in one_by_one]
    assert parts == [[f"n{i}" for i in range(start, min(start + 4, 10))] for start in (0, 4, 8)]
    assert first is not None
    assert [first[0], *rest] == [f"n{i}" for i in range(10)]


async def test_the_database_of_a_sqlite_url_uses_one_trip_connections(tmp_path: Path) -> None:
    database = Database(f"sqlite+aiosqlite:///{tmp_path / 'app.db'}")
    try:
        async with database.engine.connect() as connection:
            raw = await connection.get_raw_connection()
            assert isinstance(raw.driver_connection, OneTripConnection)
            assert (await connection.execute(sa.text("PRAGMA journal_mode"))).scalar() == "wal"
    finally:
        await database.dispose()
