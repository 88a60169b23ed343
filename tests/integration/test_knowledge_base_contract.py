"""SqlAlchemyKnowledgeBase on SQLite and PostgreSQL: owner-scoped datasets, chunks with vectors,
similarity search over an in-process cache that follows every added document. The listing of an
owner's datasets runs on the unit tests' in-process double too (tests/fakes.py), so that a unit
test's listing behaves like production's."""

from __future__ import annotations

import asyncio
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import pytest
from alembic import command
from sqlalchemy import inspect, text

from domain.ids import OwnerId
from domain.knowledge.datasets import Chunk, Dataset
from infrastructure.persistence.database import Database
from infrastructure.persistence.migrate import alembic_config, run_migrations
from infrastructure.persistence.sqlalchemy_knowledge_base import SqlAlchemyKnowledgeBase
from infrastructure.persistence.urls import normalise_url
from tests.fakes import FakeKnowledgeBase
from tests.integration.db_fixtures import database_url, migrated_url, pg_database_url, sqlite_url  # noqa: F401

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

    from application.ports.knowledge_base import KnowledgeBase

pytestmark = pytest.mark.integration

ALICE, BOB = OwnerId("alice"), OwnerId("bob")
T0 = datetime(2026, 1, 1, tzinfo=UTC)


@asynccontextmanager
async def started(url: str) -> AsyncIterator[Database]:
    """A started Database; PostgreSQL's knowledge tables are emptied afterwards (the database is shared)."""
    database = Database(url)
    await database.start()
    try:
        yield database
    finally:
        if not database.is_sqlite:
            async with database.engine.begin() as connection:
                await connection.execute(text("TRUNCATE chunks, documents, datasets"))
        await database.dispose()


@pytest.fixture
async def database(database_url: str) -> AsyncIterator[Database]:  # noqa: F811
    async with started(database_url) as database:
        yield database


@pytest.fixture(params=["sqlite", "postgresql", "in-process double"])
async def knowledge(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[KnowledgeBase]:
    if request.param == "in-process double":
        yield FakeKnowledgeBase()
        return
    url = sqlite_url(tmp_path / "data" / "memagent.db") if request.param == "sqlite" else str(
        request.getfixturevalue("pg_database_url"))
    async with started(url) as database:
        yield SqlAlchemyKnowledgeBase(database)


def unit(*values: float) -> list[float]:
    return list(values)


def chunks(dataset_id: str, document_id: str, *texts: str) -> list[Chunk]:
    return [
        Chunk(f"{document_id}-{i}", dataset_id, document_id, f"{document_id}.md", i, t) for i, t in enumerate(texts)
    ]


async def test_datasets_belong_to_their_owner(database: Database) -> None:
    kb = SqlAlchemyKnowledgeBase(database)
    dataset = Dataset("ds1", ALICE, "Handbook", T0)
    await kb.add_dataset(dataset)
    assert await kb.get_dataset("ds1", ALICE) == dataset
    assert await kb.get_dataset("ds1", BOB) is None
    assert await kb.get_dataset("missing", ALICE) is None


async def test_an_owner_lists_only_their_datasets_newest_first_ties_by_id(knowledge: KnowledgeBase) -> None:
    later = T0 + timedelta(hours=1)
    for dataset in (Dataset("ds-a", ALICE, "Oldest", T0), Dataset("ds-c", ALICE, "Later, second by id", later),
                    Dataset("ds-b", ALICE, "Later, first by id", later), Dataset("ds-x", BOB, "Bob's", T0)):
        await knowledge.add_dataset(dataset)
    assert [d.id for d in await knowledge.list_datasets(ALICE, 0, 10)] == ["ds-b", "ds-c", "ds-a"]
    assert await knowledge.list_datasets(BOB, 0, 10) == [Dataset("ds-x", BOB, "Bob's", T0)]
    assert await knowledge.list_datasets(OwnerId("carol"), 0, 10) == []


async def test_pages_of_datasets_follow_each_other_without_gaps_or_repeats(knowledge: KnowledgeBase) -> None:
    for i in range(5):
        await knowledge.add_dataset(Dataset(f"ds{i}", ALICE, f"Set {i}", T0 + timedelta(minutes=i)))
    pages = [[d.id for d in await knowledge.list_datasets(ALICE, offset, 2)] for offset in (0, 2, 4, 6)]
    assert pages == [["ds4", "ds3"], ["ds2", "ds1"], ["ds0"], []]
    assert await knowledge.list_datasets(ALICE, 2**62, 100) == []


async def test_search_ranks_by_cosine_keeps_top_k_and_drops_low_scores(database: Database) -> None:
    kb = SqlAlchemyKnowledgeBase(database)
    await kb.add_dataset(Dataset("ds1", ALICE, "Handbook", T0))
    await kb.add_chunks(
        chunks("ds1", "doc1", "holiday", "parking", "lunch"),
        [unit(1, 0, 0), unit(0, 1, 0), unit(0.8, 0.6, 0)],
    )
    found = await kb.search(ALICE, ["ds1"], unit(2, 0, 0), top_k=2, min_score=0.0)
    assert [(s.chunk.text, round(s.score, 4)) for s in found] == [("holiday", 1.0), ("lunch", 0.8)]
    assert found[0].chunk == Chunk("doc1-0", "ds1", "doc1", "doc1.md", 0, "holiday")
    assert [s.chunk.text for s in await kb.search(ALICE, ["ds1"], unit(1, 0, 0), 5, 0.5)] == ["holiday", "lunch"]
    assert await kb.search(ALICE, ["ds1"], unit(0, 0, 1), 5, 0.1) == []
    assert await kb.search(ALICE, [], unit(1, 0, 0), 5, 0.0) == []
    assert await kb.search(ALICE, ["ds1"], unit(0, 0, 0), 5, 0.0) == []


async def test_search_never_reads_another_owners_dataset(database: Database) -> None:
    kb = SqlAlchemyKnowledgeBase(database)
    await kb.add_dataset(Dataset("theirs", BOB, "secrets", T0))
    await kb.add_chunks(chunks("theirs", "doc1", "the secret"), [unit(1, 0)])
    assert await kb.search(ALICE, ["theirs"], unit(1, 0), 3, 0.0) == []
    assert len(await kb.search(BOB, ["theirs"], unit(1, 0), 3, 0.0)) == 1


async def test_counts_and_search_follow_every_added_document_even_from_another_process(database: Database) -> None:
    kb, other = SqlAlchemyKnowledgeBase(database), SqlAlchemyKnowledgeBase(database)  # two processes' caches
    await kb.add_dataset(Dataset("ds1", ALICE, "Handbook", T0))
    await kb.add_dataset(Dataset("ds2", ALICE, "Wiki", T0))
    await kb.add_chunks(chunks("ds1", "doc1", "a", "b"), [unit(1, 0), unit(0, 1)])
    assert [s.chunk.text for s in await kb.search(ALICE, ["ds1", "ds2"], unit(1, 1), 5, 0.0)] == ["a", "b"]
    await other.add_chunks(chunks("ds2", "doc2", "c"), [unit(1, 1)])
    found = await kb.search(ALICE, ["ds1", "ds2"], unit(1, 1), 5, 0.0)
    assert found[0].chunk.text == "c"
    assert {s.chunk.dataset_id for s in found} == {"ds1", "ds2"}
    assert await kb.counts("ds1") == await other.counts("ds1")
    assert (await kb.counts("ds1")).chunks == 2
    assert (await kb.counts("ds2")).documents == 1
    assert (await kb.counts("missing")).documents == 0


async def test_vectors_of_another_length_are_left_out_not_an_error(database: Database) -> None:
    kb = SqlAlchemyKnowledgeBase(database)
    await kb.add_dataset(Dataset("ds1", ALICE, "Handbook", T0))
    await kb.add_chunks(chunks("ds1", "old", "old model"), [unit(1, 0, 0, 0)])
    await kb.add_chunks(chunks("ds1", "new", "new model"), [unit(1, 0)])
    assert [s.chunk.text for s in await kb.search(ALICE, ["ds1"], unit(1, 0), 5, 0.0)] == ["new model"]


async def test_a_database_from_before_knowledge_bases_is_upgraded_at_start(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path / "old" / "memagent.db")

    def older_schema() -> None:  # Alembic drives its own event loop
        run_migrations(url)
        command.downgrade(alembic_config(normalise_url(url)), "0002")

    await asyncio.to_thread(older_schema)
    db = Database(url)
    try:
        async with db.engine.connect() as connection:
            before = await connection.run_sync(lambda sync: set(inspect(sync).get_table_names()))
        assert "datasets" not in before
        await db.start()
        await db.check_migrated()
        kb = SqlAlchemyKnowledgeBase(db)
        await kb.add_dataset(Dataset("ds1", ALICE, "Handbook", T0))
        await kb.add_chunks(chunks("ds1", "doc1", "a"), [unit(1, 0)])
        assert len(await kb.search(ALICE, ["ds1"], unit(1, 0), 1, 0.0)) == 1
    finally:
        await db.dispose()


async def test_the_migrated_knowledge_tables_match_the_rows(migrated_url: str) -> None:  # noqa: F811
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext

    from infrastructure.persistence.rows import Base

    db = Database(migrated_url)
    try:
        await db.check_migrated()
        async with db.engine.connect() as connection:
            diffs = await connection.run_sync(
                lambda sync: compare_metadata(MigrationContext.configure(sync), Base.metadata)
            )
    finally:
        await db.dispose()
    assert [d for d in diffs if "datasets" in str(d) or "documents" in str(d) or "chunks" in str(d)] == []
