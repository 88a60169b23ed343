"""Documents waiting for their ingestion job (docs/ARCHITECTURE.md §10), and every document's state.

Every method raises `StoreUnavailable` when the database fails.
"""

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from domain.ids import OwnerId
from domain.knowledge.datasets import Chunk, Document, PendingDocument


class DocumentIntake(Protocol):
    async def add_pending(self, pending: PendingDocument, at: datetime) -> None:
        """Keep a checked document, with its text, as `indexing`."""
        ...

    async def pending(self, document_id: str) -> PendingDocument | None:
        """The document with its text while it is `indexing`; None once indexed (or gone)."""
        ...

    async def complete(self, document_id: str, chunks: Sequence[Chunk], vectors: Sequence[Sequence[float]]) -> bool:
        """Store the chunks with their vectors and make the document `ready` (its text let go), in
        one transaction, if it is still `indexing`; False (nothing written) otherwise."""
        ...

    async def fail(self, document_id: str, error: str) -> None:
        """Mark a document still `indexing` as `failed`, saying why."""
        ...

    async def get_document(self, dataset_id: str, document_id: str, owner: OwnerId) -> Document | None:
        """The document of `owner`'s dataset, in any state."""
        ...
