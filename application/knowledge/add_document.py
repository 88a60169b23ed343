"""Add a text document to a dataset: checked, cut into chunks, embedded and stored in the request
(`AddDocument`), or checked and kept for an ingestion job (`queue_document.py`)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from application.errors import ApplicationError, InvalidInput, NotFound
from application.knowledge.documents import DocumentLimits, document_name, document_text, document_type
from domain.knowledge import Chunk, Document, DocumentStatus, PendingDocument, split_into_chunks

if TYPE_CHECKING:
    from collections.abc import Sequence

    from application.ports.document_intake import DocumentIntake
    from application.ports.embedder import Embedder
    from application.ports.knowledge_base import KnowledgeBase
    from application.ports.runtime import Clock, IdGenerator
    from domain.ids import OwnerId


@dataclass(frozen=True, slots=True)
class CheckedDocument:
    name: str
    media_type: str
    text: str
    size: int


async def checked_document(
    knowledge: KnowledgeBase, limits: DocumentLimits, owner: OwnerId, dataset_id: str, name: str,
    content: bytes | str, media_type: str | None,
) -> CheckedDocument:
    """Everything checked before anything is embedded or kept: a refused document costs nothing."""
    if await knowledge.get_dataset(dataset_id, owner) is None:
        raise NotFound(f"Dataset {dataset_id!r} was not found.")
    name = document_name(name)
    kind = document_type(name, media_type)
    text, size = document_text(content, limits)
    if not pieces_of(text, limits):
        raise InvalidInput("The document is empty.")
    return CheckedDocument(name, kind, text, size)


def pieces_of(text: str, limits: DocumentLimits) -> list[str]:
    return split_into_chunks(text, limits.chunk_size, limits.chunk_overlap)


def chunks_of(document: Document, pieces: Sequence[str], ids: IdGenerator) -> list[Chunk]:
    return [
        Chunk(ids.new_id(), document.dataset_id, document.id, document.name, position, piece)
        for position, piece in enumerate(pieces)
    ]


class AddDocument:
    """In the request: kept as `indexing`, embedded, then stored `ready` with its chunks. An embedder
    that fails marks it `failed` (so no document waits for an indexing that will not come)."""

    def __init__(
        self, knowledge: KnowledgeBase, intake: DocumentIntake, embedder: Embedder, ids: IdGenerator, clock: Clock,
        limits: DocumentLimits,
    ) -> None:
        self._knowledge = knowledge
        self._intake = intake
        self._embedder = embedder
        self._ids = ids
        self._clock = clock
        self._limits = limits

    @property
    def limits(self) -> DocumentLimits:
        return self._limits

    async def __call__(
        self, owner: OwnerId, dataset_id: str, name: str, content: bytes | str, media_type: str | None = None
    ) -> Document:
        checked = await checked_document(self._knowledge, self._limits, owner, dataset_id, name, content, media_type)
        pieces = pieces_of(checked.text, self._limits)
        document = Document(self._ids.new_id(), dataset_id, checked.name, checked.media_type, checked.size, 0,
                            DocumentStatus.INDEXING)
        await self._intake.add_pending(PendingDocument(document, checked.text), self._clock.now())
        try:
            vectors = await self._embedder.embed(pieces)
        except ApplicationError as failure:
            await self._intake.fail(document.id, f"Indexing failed: {failure.message}")
            raise
        await self._intake.complete(document.id, chunks_of(document, pieces, self._ids), vectors)
        return replace(document, chunks=len(pieces), status=DocumentStatus.READY)
