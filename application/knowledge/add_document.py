"""Add a text document to a dataset: checked, cut into chunks, embedded, stored in one go."""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.errors import InvalidInput, NotFound
from application.knowledge.documents import AddedDocument, DocumentLimits, document_name, document_text, document_type
from domain.knowledge import Chunk, split_into_chunks

if TYPE_CHECKING:
    from application.ports.embedder import Embedder
    from application.ports.knowledge_base import KnowledgeBase
    from application.ports.runtime import IdGenerator
    from domain.ids import OwnerId


class AddDocument:
    def __init__(
        self, knowledge: KnowledgeBase, embedder: Embedder, ids: IdGenerator, limits: DocumentLimits
    ) -> None:
        self._knowledge = knowledge
        self._embedder = embedder
        self._ids = ids
        self._limits = limits

    @property
    def limits(self) -> DocumentLimits:
        return self._limits

    async def __call__(
        self, owner: OwnerId, dataset_id: str, name: str, content: bytes | str, media_type: str | None = None
    ) -> AddedDocument:
        """Checks everything before it embeds anything: a refused document costs nothing."""
        if await self._knowledge.get_dataset(dataset_id, owner) is None:
            raise NotFound(f"Dataset {dataset_id!r} was not found.")
        name = document_name(name)
        kind = document_type(name, media_type)
        text, size = document_text(content, self._limits)
        pieces = split_into_chunks(text, self._limits.chunk_size, self._limits.chunk_overlap)
        if not pieces:
            raise InvalidInput("The document is empty.")
        vectors = await self._embedder.embed(pieces)
        document_id = self._ids.new_id()
        chunks = [
            Chunk(self._ids.new_id(), dataset_id, document_id, name, position, piece)
            for position, piece in enumerate(pieces)
        ]
        await self._knowledge.add_chunks(chunks, vectors)
        return AddedDocument(document_id, dataset_id, name, kind, size, len(chunks))
