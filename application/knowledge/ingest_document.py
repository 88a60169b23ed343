"""IngestDocument: the ingestion job of a queued document (docs/ARCHITECTURE.md §10), run by a job
worker: its text cut into chunks, embedded, and stored with the document made `ready` in one
transaction. Idempotent: a document no longer `indexing` (done by an earlier run, or deleted) is
left as it is. An embedder that fails raises, so the queue retries; on the last try the document
is marked `failed` with the reason, so its owner is not left waiting."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from application.errors import ApplicationError
from application.knowledge.add_document import chunks_of, pieces_of
from application.ports.jobs import JobHandler

if TYPE_CHECKING:
    from application.knowledge.documents import DocumentLimits
    from application.ports.document_intake import DocumentIntake
    from application.ports.embedder import Embedder
    from application.ports.runtime import IdGenerator
    from domain.jobs import Job

log = logging.getLogger(__name__)


class IngestDocument(JobHandler):
    def __init__(self, intake: DocumentIntake, embedder: Embedder, ids: IdGenerator, limits: DocumentLimits) -> None:
        self._intake = intake
        self._embedder = embedder
        self._ids = ids
        self._limits = limits

    async def __call__(self, job: Job, last_try: bool) -> None:
        pending = await self._intake.pending(job.subject)
        if pending is None:
            log.info("job %s: document %s is indexed already, or gone", job.key, job.subject)
            return
        pieces = pieces_of(pending.text, self._limits)
        try:
            vectors = await self._embedder.embed(pieces)
        except ApplicationError as failure:
            if not last_try:
                raise
            await self._intake.fail(pending.document.id, f"Indexing failed: {failure.message}")
            return
        await self._intake.complete(pending.document.id, chunks_of(pending.document, pieces, self._ids), vectors)
