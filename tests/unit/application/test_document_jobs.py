"""Documents indexed by an ingestion job (application/knowledge/queue_document.py, ingest_document.py):
the request checks and keeps the document and answers `indexing`; the job cuts, embeds and stores it
once; an embedder that keeps failing leaves the document `failed` with the reason, never waiting."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from application.background_jobs import JobRoutes
from application.errors import InvalidInput, ModelError, NotFound, StoreUnavailable
from application.knowledge.add_document import AddDocument, InRequestIndexing
from application.knowledge.create_dataset import CreateDataset
from application.knowledge.documents import DocumentLimits
from application.knowledge.ingest_document import IngestDocument
from application.knowledge.queue_document import NOT_QUEUED, QueuedIndexing
from application.knowledge.read_document import ReadDocument
from domain.ids import OwnerId
from domain.jobs import Job
from domain.knowledge.datasets import DocumentStatus
from infrastructure.jobs.inprocess_job_queue import InProcessJobQueue
from tests.fakes import FakeClock, FakeDocumentIntake, FakeEmbedder, FakeKnowledgeBase, SequentialIds

ALICE, BOB = OwnerId("alice"), OwnerId("bob")
TEXT = "Holiday: 25 days per year. Parking is behind the building. The office opens at eight."
LIMITS = DocumentLimits(1000, 40, 10)


class FailingEmbedder(FakeEmbedder):
    """Fails its first `failures` calls."""

    def __init__(self, failures: int) -> None:
        super().__init__()
        self.failures = failures

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if self.failures:
            self.failures -= 1
            raise ModelError("The embedder is down.")
        return await super().embed(texts)


class NoTurns:
    async def __call__(self, job: Job, last_try: bool) -> None:
        raise AssertionError("not a turn's job")


class World:
    def __init__(self, embedder: FakeEmbedder | None = None) -> None:
        self.knowledge = FakeKnowledgeBase()
        self.intake = FakeDocumentIntake(self.knowledge)
        self.embedder = embedder or FakeEmbedder()
        ids, clock = SequentialIds(), FakeClock()
        self.ingest = IngestDocument(self.intake, self.embedder, ids, LIMITS)
        self.jobs = InProcessJobQueue(JobRoutes(NoTurns(), self.ingest), retries=3)
        self.queue = AddDocument(self.knowledge, QueuedIndexing(self.intake, self.jobs), ids, clock, LIMITS)
        in_request = InRequestIndexing(self.intake, self.embedder, ids, LIMITS)
        self.add = AddDocument(self.knowledge, in_request, ids, clock, LIMITS)
        self.create = CreateDataset(self.knowledge, clock, ids)
        self.read = ReadDocument(self.intake)


async def test_a_queued_document_answers_indexing_at_once_and_its_job_makes_it_ready_and_searchable() -> None:
    world = World()
    dataset = await world.create(ALICE, "Handbook")
    queued = await world.queue(ALICE, dataset.id, "handbook.md", TEXT)
    assert (queued.status, queued.chunks, queued.size) == (DocumentStatus.INDEXING, 0, len(TEXT))
    await world.jobs.drain()
    ready = await world.read(ALICE, dataset.id, queued.id)
    assert ready.status is DocumentStatus.READY
    assert ready.chunks == len(world.knowledge.chunks) > 1
    assert world.embedder.embedded == [c.text for c, _ in world.knowledge.chunks]


async def test_an_ingestion_run_twice_stores_the_chunks_once() -> None:
    world = World()
    dataset = await world.create(ALICE, "Handbook")
    queued = await world.queue(ALICE, dataset.id, "handbook.md", TEXT)
    await world.jobs.drain()
    stored = len(world.knowledge.chunks)
    await world.ingest(Job.ingest(ALICE, dataset.id, queued.id), last_try=False)
    assert len(world.knowledge.chunks) == stored


async def test_an_embedder_that_fails_is_retried_and_a_later_try_indexes_the_document() -> None:
    world = World(FailingEmbedder(failures=2))
    dataset = await world.create(ALICE, "Handbook")
    queued = await world.queue(ALICE, dataset.id, "handbook.md", TEXT)
    await world.jobs.drain()
    assert (await world.read(ALICE, dataset.id, queued.id)).status is DocumentStatus.READY


async def test_an_embedder_failing_on_every_try_leaves_the_document_failed_with_the_reason() -> None:
    world = World(FailingEmbedder(failures=3))
    dataset = await world.create(ALICE, "Handbook")
    queued = await world.queue(ALICE, dataset.id, "handbook.md", TEXT)
    await world.jobs.drain()
    failed = await world.read(ALICE, dataset.id, queued.id)
    assert (failed.status, failed.error) == (DocumentStatus.FAILED, "Indexing failed: The embedder is down.")
    assert world.knowledge.chunks == []


async def test_a_queue_that_fails_marks_the_kept_document_failed_and_says_so() -> None:
    world = World()
    dataset = await world.create(ALICE, "Handbook")

    async def unavailable(job: Job) -> bool:
        raise StoreUnavailable("The job queue is unavailable.")

    world.jobs.enqueue = unavailable  # type: ignore[method-assign]
    with pytest.raises(StoreUnavailable, match="upload it again"):
        await world.queue(ALICE, dataset.id, "handbook.md", TEXT)
    (kept,) = world.intake.documents.values()
    assert (kept.status, kept.error) == (DocumentStatus.FAILED, NOT_QUEUED)


async def test_a_refused_document_is_neither_kept_nor_queued() -> None:
    world = World()
    dataset = await world.create(ALICE, "Handbook")
    with pytest.raises(InvalidInput):
        await world.queue(ALICE, dataset.id, "handbook.md", "   ")
    with pytest.raises(NotFound):
        await world.queue(BOB, dataset.id, "handbook.md", TEXT)
    assert world.intake.documents == {}
    assert await world.jobs.lag() == 0.0


async def test_a_document_added_in_the_request_whose_embedder_fails_is_failed_not_left_indexing() -> None:
    world = World(FailingEmbedder(failures=1))
    dataset = await world.create(ALICE, "Handbook")
    with pytest.raises(ModelError):
        await world.add(ALICE, dataset.id, "handbook.md", TEXT)
    (kept,) = world.intake.documents.values()
    assert kept.status is DocumentStatus.FAILED


async def test_another_owner_reads_no_document() -> None:
    world = World()
    dataset = await world.create(ALICE, "Handbook")
    added = await world.add(ALICE, dataset.id, "handbook.md", TEXT)
    assert (await world.read(ALICE, dataset.id, added.id)).status is DocumentStatus.READY
    with pytest.raises(NotFound):
        await world.read(BOB, dataset.id, added.id)
