"""The DocumentIntake contract on SQLite and PostgreSQL (and the unit tests' double): a document
kept with its text while it is `indexing`, completed once (its chunks searchable, its text let
go), failed with a reason, and read only by its dataset's owner."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from domain.knowledge.datasets import Chunk, Dataset, Document, DocumentStatus, PendingDocument
from infrastructure.persistence.sqlalchemy_document_intake import SqlAlchemyDocumentIntake
from infrastructure.persistence.sqlalchemy_knowledge_base import SqlAlchemyKnowledgeBase
from tests.fakes import FakeDocumentIntake, FakeKnowledgeBase
from tests.integration.db_fixtures import database_url, migrated_url, pg_database_url, sqlite_url  # noqa: F401
from tests.integration.test_knowledge_base_contract import ALICE, BOB, T0, started

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

    from application.ports.document_intake import DocumentIntake
    from application.ports.knowledge_base import KnowledgeBase

pytestmark = pytest.mark.integration

DOCUMENT = Document("doc1", "ds1", "handbook.md", "text/markdown", 42, 0, DocumentStatus.INDEXING)
TEXT = "Holiday: 25 days. Parking: behind the building."


@pytest.fixture(params=["sqlite", "postgresql", "in-process double"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str | None:
    """The database's URL (None: the in-process double); resolved outside the event loop."""
    if request.param == "in-process double":
        return None
    if request.param == "sqlite":
        return sqlite_url(tmp_path / "data" / "memagent.db")
    return str(request.getfixturevalue("pg_database_url"))


@pytest.fixture
async def stores(store_url: str | None) -> AsyncIterator[tuple[DocumentIntake, KnowledgeBase]]:
    if store_url is None:
        knowledge = FakeKnowledgeBase()
        await knowledge.add_dataset(Dataset("ds1", ALICE, "Handbook", T0))
        yield FakeDocumentIntake(knowledge), knowledge
        return
    async with started(store_url) as database:
        kb = SqlAlchemyKnowledgeBase(database)
        await kb.add_dataset(Dataset("ds1", ALICE, "Handbook", T0))
        yield SqlAlchemyDocumentIntake(database), kb


def two_chunks() -> list[Chunk]:
    return [Chunk(f"doc1-{i}", "ds1", "doc1", "handbook.md", i, t) for i, t in enumerate(("Holiday", "Parking"))]


async def test_a_pending_document_is_read_with_its_text_until_it_is_complete(stores: tuple) -> None:
    intake, knowledge = stores
    await intake.add_pending(PendingDocument(DOCUMENT, TEXT), T0)
    assert await intake.pending("doc1") == PendingDocument(DOCUMENT, TEXT)
    assert await intake.get_document("ds1", "doc1", ALICE) == DOCUMENT
    assert await intake.complete("doc1", two_chunks(), [[1.0, 0.0], [0.0, 1.0]])
    assert await intake.pending("doc1") is None
    ready = await intake.get_document("ds1", "doc1", ALICE)
    assert (ready.status, ready.chunks, ready.size, ready.media_type) == (DocumentStatus.READY, 2, 42, "text/markdown")
    found = await knowledge.search(ALICE, ["ds1"], [1.0, 0.0], 1, 0.0)
    assert [s.chunk.text for s in found] == ["Holiday"]


async def test_a_document_is_completed_once_so_a_job_run_twice_stores_its_chunks_once(stores: tuple) -> None:
    intake, knowledge = stores
    await intake.add_pending(PendingDocument(DOCUMENT, TEXT), T0)
    assert await intake.complete("doc1", two_chunks(), [[1.0, 0.0], [0.0, 1.0]])
    again = [Chunk(f"doc1-again-{i}", "ds1", "doc1", "handbook.md", i, "x") for i in range(2)]
    assert not await intake.complete("doc1", again, [[1.0, 0.0], [0.0, 1.0]])
    assert len(await knowledge.search(ALICE, ["ds1"], [1.0, 1.0], 10, 0.0)) == 2
    assert (await intake.get_document("ds1", "doc1", ALICE)).chunks == 2


async def test_a_failed_document_says_why_and_is_no_longer_pending(stores: tuple) -> None:
    intake, _ = stores
    await intake.add_pending(PendingDocument(DOCUMENT, TEXT), T0)
    await intake.fail("doc1", "Indexing failed: the embedder is down.")
    failed = await intake.get_document("ds1", "doc1", ALICE)
    assert (failed.status, failed.error) == (DocumentStatus.FAILED, "Indexing failed: the embedder is down.")
    assert await intake.pending("doc1") is None
    assert not await intake.complete("doc1", two_chunks(), [[1.0, 0.0], [0.0, 1.0]])


async def test_a_document_is_read_only_by_its_dataset_s_owner_and_in_its_dataset(stores: tuple) -> None:
    intake, _ = stores
    await intake.add_pending(PendingDocument(DOCUMENT, TEXT), T0)
    assert await intake.get_document("ds1", "doc1", BOB) is None
    assert await intake.get_document("ds2", "doc1", ALICE) is None
    assert await intake.get_document("ds1", "missing", ALICE) is None
    assert await intake.pending("missing") is None

