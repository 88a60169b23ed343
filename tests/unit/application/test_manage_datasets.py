"""Datasets: created per owner, documents checked before anything is embedded, chunked with overlap."""

from __future__ import annotations

import pytest

from application.errors import InvalidInput, NotFound
from application.knowledge.add_document import AddDocument, InRequestIndexing
from application.knowledge.create_dataset import CreateDataset
from application.knowledge.describe_dataset import DescribeDataset
from application.knowledge.documents import DocumentLimits, PayloadTooLarge, UnsupportedMediaType, document_type
from application.ports.dataset_inventory import DatasetCounts
from domain.ids import OwnerId
from tests.fakes import FakeClock, FakeDocumentIntake, FakeEmbedder, FakeKnowledgeBase, SequentialIds

ALICE, BOB = OwnerId("alice"), OwnerId("bob")


class Inventory:
    def __init__(self, knowledge: FakeKnowledgeBase) -> None:
        self._knowledge = knowledge

    async def counts(self, dataset_id: str) -> DatasetCounts:
        chunks = [c for c, _ in self._knowledge.chunks if c.dataset_id == dataset_id]
        return DatasetCounts(len({c.document_id for c in chunks}), len(chunks))


class World:
    def __init__(self, limits: DocumentLimits | None = None) -> None:
        self.knowledge = FakeKnowledgeBase()
        self.embedder = FakeEmbedder()
        ids = SequentialIds()
        self.create = CreateDataset(self.knowledge, FakeClock(), ids)
        self.intake = FakeDocumentIntake(self.knowledge)
        limits = limits or DocumentLimits(100, 40, 10)
        in_request = InRequestIndexing(self.intake, self.embedder, ids, limits)
        self.add = AddDocument(self.knowledge, in_request, ids, FakeClock(), limits)
        self.describe = DescribeDataset(self.knowledge, Inventory(self.knowledge))


async def test_a_document_is_chunked_with_overlap_embedded_and_counted() -> None:
    world = World()
    dataset = await world.create(ALICE, "  Handbook ")
    assert dataset.name == "Handbook"
    text = "Holiday: 25 days per year. Parking is behind the building. The office opens at eight."
    added = await world.add(ALICE, dataset.id, "docs/handbook.md", text.encode(), "application/octet-stream")
    assert (added.name, added.media_type, added.size) == ("handbook.md", "text/markdown", len(text))
    chunks = [c for c, _ in world.knowledge.chunks]
    assert added.chunks == len(chunks) > 1
    assert all(len(c.text) <= 40 for c in chunks)
    assert [c.position for c in chunks] == list(range(len(chunks)))
    assert world.embedder.embedded == [c.text for c in chunks]
    summary = await world.describe(ALICE, dataset.id)
    assert (summary.documents, summary.chunks) == (1, len(chunks))


async def test_another_owners_dataset_is_not_found() -> None:
    world = World()
    dataset = await world.create(ALICE, "private")
    with pytest.raises(NotFound):
        await world.add(BOB, dataset.id, "x.txt", "hello")
    with pytest.raises(NotFound):
        await world.describe(BOB, dataset.id)


@pytest.mark.parametrize(
    ("name", "content", "media_type", "error"),
    [
        ("big.txt", b"x" * 101, None, PayloadTooLarge),
        ("notes.pdf", b"%PDF-1.7", None, UnsupportedMediaType),
        ("notes.txt", b"hi", "application/pdf", UnsupportedMediaType),
        ("latin1.txt", "caf\u00e9".encode("latin-1"), None, UnsupportedMediaType),
        ("nul.txt", b"a\x00b", None, UnsupportedMediaType),
        ("empty.md", b"  \n\t ", None, InvalidInput),
        ("", b"text", None, InvalidInput),
        ("a\x00.txt", b"text", None, InvalidInput),  # a NUL in a multipart file name
        ("half \ud83d.txt", b"text", None, InvalidInput),
    ],
)
async def test_a_refused_document_costs_nothing(
    name: str, content: bytes, media_type: str | None, error: type[Exception]
) -> None:
    world = World()
    dataset = await world.create(ALICE, "kb")
    with pytest.raises(error):
        await world.add(ALICE, dataset.id, name, content, media_type)
    assert world.embedder.embedded == []
    assert world.knowledge.chunks == []
    assert world.intake.documents == {}


def test_the_media_type_wins_when_known_else_the_name_decides() -> None:
    with pytest.raises(UnsupportedMediaType):  # a name the type cannot vouch for (x.sh as text/plain)
        document_type("a.bin", "text/plain; charset=utf-8")
    assert document_type("a.txt", "text/x-markdown") == "text/markdown"
    assert document_type("README", None) == "text/plain"
    assert document_type("notes.MD", "") == "text/markdown"


async def test_a_dataset_needs_a_name() -> None:
    with pytest.raises(InvalidInput):
        await World().create(ALICE, "   ")
