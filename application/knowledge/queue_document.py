"""QueuedIndexing: how `AddDocument` indexes with job workers (MEMAGENT_JOBS__BACKEND=redis,
docs/ARCHITECTURE.md §10). The checked document is kept with its text as `indexing` and handed to an
ingestion job (`IngestDocument`), so that cutting and embedding a large document costs the API
process nothing. The answer says `indexing`; `GET /api/datasets/{id}/documents/{document_id}` says
when it is `ready`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.errors import ApplicationError, StoreUnavailable
from application.knowledge.add_document import DocumentIndexing
from domain.jobs import Job

if TYPE_CHECKING:
    from datetime import datetime

    from application.ports.document_intake import DocumentIntake
    from application.ports.jobs import JobQueue
    from domain.ids import OwnerId
    from domain.knowledge.datasets import Document, PendingDocument

NOT_QUEUED = "The document could not be queued for indexing: upload it again."


class QueuedIndexing(DocumentIndexing):
    def __init__(self, intake: DocumentIntake, jobs: JobQueue) -> None:
        self._intake = intake
        self._jobs = jobs

    async def index(self, owner: OwnerId, pending: PendingDocument, at: datetime) -> Document:
        document = pending.document
        await self._intake.add_pending(pending, at)
        try:
            await self._jobs.enqueue(Job.ingest(owner, document.dataset_id, document.id))
        except ApplicationError:
            # Kept, but no job will index it: say so on the document, and to the client.
            await self._intake.fail(document.id, NOT_QUEUED)
            raise StoreUnavailable(NOT_QUEUED) from None
        return document
