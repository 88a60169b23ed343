"""QueueDocument: a document checked as `AddDocument` checks it, then kept with its text as
`indexing` and handed to an ingestion job (MEMAGENT_JOBS__BACKEND=redis, docs/ARCHITECTURE.md §10),
so that cutting and embedding a large document costs the API process nothing. The answer says
`indexing`; `GET /api/datasets/{id}/documents/{document_id}` says when it is `ready`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.errors import ApplicationError, StoreUnavailable
from application.knowledge.add_document import checked_document
from domain.jobs import Job
from domain.knowledge import Document, DocumentStatus, PendingDocument

if TYPE_CHECKING:
    from application.knowledge.documents import DocumentLimits
    from application.ports.document_intake import DocumentIntake
    from application.ports.jobs import JobQueue
    from application.ports.knowledge_base import KnowledgeBase
    from application.ports.runtime import Clock, IdGenerator
    from domain.ids import OwnerId

NOT_QUEUED = "The document could not be queued for indexing: upload it again."


class QueueDocument:
    def __init__(
        self, knowledge: KnowledgeBase, intake: DocumentIntake, jobs: JobQueue, ids: IdGenerator, clock: Clock,
        limits: DocumentLimits,
    ) -> None:
        self._knowledge = knowledge
        self._intake = intake
        self._jobs = jobs
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
        document = Document(self._ids.new_id(), dataset_id, checked.name, checked.media_type, checked.size, 0,
                            DocumentStatus.INDEXING)
        await self._intake.add_pending(PendingDocument(document, checked.text), self._clock.now())
        try:
            await self._jobs.enqueue(Job.ingest(owner, dataset_id, document.id))
        except ApplicationError:
            # Kept, but no job will index it: say so on the document, and to the client.
            await self._intake.fail(document.id, NOT_QUEUED)
            raise StoreUnavailable(NOT_QUEUED) from None
        return document
