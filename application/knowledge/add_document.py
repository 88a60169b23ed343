"""AddDocument: a text document added to a dataset. It is checked, then indexed as the container
chose (docs/ARCHITECTURE.md §10): cut into chunks, embedded and stored in the request
(`InRequestIndexing`, 201 `ready`), or kept for an ingestion job (`QueuedIndexing`,
queue_document.py, 202 `indexing`)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Protocol

from application.errors import ApplicationError, InvalidInput, NotFound
from application.knowledge.documents import DocumentLimits, document_name, document_text, document_type
from domain.knowledge.datasets import Chunk, Document, DocumentStatus, PendingDocument, split_into_chunks

if TYPE_CHECKING:
    from collections.abc import Sequence
    from datetime import datetime

    from application.ports.document_intake import DocumentIntake
    from application.ports.embedder import Embedder
    from application.ports.knowledge_base import KnowledgeBase
    from application.ports.runtime import Clock, IdGenerator
    from domain.ids import OwnerId


class DocumentIndexing(Protocol):
    """How a checked document is indexed: `InRequestIndexing` here, or `QueuedIndexing` by a job worker."""

    async def index(self, owner: OwnerId, pending: PendingDocument, at: datetime) -> Document:
        """Keep the document (added `at`) and index it, or have it indexed: the document as its owner
        sees it now. One kept that will not be indexed is marked `failed` before this raises, so no
        document waits for an indexing that will not come."""
        ...


class AddDocument:
    def __init__(
        self, knowledge: KnowledgeBase, indexing: DocumentIndexing, ids: IdGenerator, clock: Clock,
        limits: DocumentLimits,
    ) -> None:
        self._knowledge = knowledge
        self._indexing = indexing
        self._ids = ids
        self._clock = clock
        self._limits = limits

    @property
    def limits(self) -> DocumentLimits:
        return self._limits

    async def __call__(
        self, owner: OwnerId, dataset_id: str, name: str, content: bytes | str, media_type: str | None = None
    ) -> Document:
        # All checked before anything is kept, embedded or queued: a refused document costs nothing.
        if await self._knowledge.get_dataset(dataset_id, owner) is None:
            raise NotFound(f"Dataset {dataset_id!r} was not found.")
        name = document_name(name)
        kind = document_type(name, media_type)
        text, size = document_text(content, self._limits)
        if not pieces_of(text, self._limits):
            raise InvalidInput("The document is empty.")
        document = Document(self._ids.new_id(), dataset_id, name, kind, size, 0, DocumentStatus.INDEXING)
        return await self._indexing.index(owner, PendingDocument(document, text), self._clock.now())


class InRequestIndexing(DocumentIndexing):
    """In the request: kept as `indexing`, embedded, then stored `ready` with its chunks. An embedder
    that fails marks it `failed` and raises."""

    def __init__(self, intake: DocumentIntake, embedder: Embedder, ids: IdGenerator, limits: DocumentLimits) -> None:
        self._intake = intake
        self._embedder = embedder
        self._ids = ids
        self._limits = limits

    async def index(self, owner: OwnerId, pending: PendingDocument, at: datetime) -> Document:
        document = pending.document
        pieces = pieces_of(pending.text, self._limits)
        await self._intake.add_pending(pending, at)
        try:
            vectors = await self._embedder.embed(pieces)
        except ApplicationError as failure:
            await self._intake.fail(document.id, f"Indexing failed: {failure.message}")
            raise
        await self._intake.complete(document.id, chunks_of(document, pieces, self._ids), vectors)
        return replace(document, chunks=len(pieces), status=DocumentStatus.READY)


def pieces_of(text: str, limits: DocumentLimits) -> list[str]:
    return split_into_chunks(text, limits.chunk_size, limits.chunk_overlap)


def chunks_of(document: Document, pieces: Sequence[str], ids: IdGenerator) -> list[Chunk]:
    return [
        Chunk(ids.new_id(), document.dataset_id, document.id, document.name, position, piece)
        for position, piece in enumerate(pieces)
    ]
