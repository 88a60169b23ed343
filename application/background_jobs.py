"""JobRoutes: the one handler a job worker runs, handing each job to its capability's handler —
a turn's jobs to `RunTurnJob`, an ingestion to `IngestDocument` (docs/ARCHITECTURE.md §10)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.ports.jobs import JobHandler
from domain.jobs import JobKind

if TYPE_CHECKING:
    from domain.jobs import Job


class JobRoutes(JobHandler):
    def __init__(self, turns: JobHandler, documents: JobHandler) -> None:
        self._turns = turns
        self._documents = documents

    async def __call__(self, job: Job, last_try: bool) -> None:
        handler = self._documents if job.kind is JobKind.INGEST else self._turns
        await handler(job, last_try)
