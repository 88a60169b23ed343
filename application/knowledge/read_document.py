"""ReadDocument: one document of the caller's dataset, with how far its indexing is."""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.errors import NotFound

if TYPE_CHECKING:
    from application.ports.document_intake import DocumentIntake
    from domain.ids import OwnerId
    from domain.knowledge.datasets import Document


class ReadDocument:
    def __init__(self, intake: DocumentIntake) -> None:
        self._intake = intake

    async def __call__(self, owner: OwnerId, dataset_id: str, document_id: str) -> Document:
        found = await self._intake.get_document(dataset_id, document_id, owner)
        if found is None:
            raise NotFound(f"Document {document_id!r} was not found in dataset {dataset_id!r}.")
        return found
