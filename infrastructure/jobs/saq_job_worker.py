"""SaqJobWorker: runs the jobs of a `SaqJobQueue` (`memagent worker`, docs/ARCHITECTURE.md §10).

saq's worker does the queue's side: it takes up to `concurrency` jobs at once, cancels one past
its timeout and retries it, reports each job's end, and every `sweep_interval` seconds (one
worker at a time) re-queues the jobs of a worker that died mid-job, once their timeout has passed,
all of them together (`saq_sweep.py`).
SIGTERM or SIGINT lets the running jobs finish, within `grace` seconds, then stops.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from saq import Worker

from infrastructure.jobs.saq_job_queue import FUNCTION, job_of
from infrastructure.jobs.saq_sweep import ABORT_POLL

SAQ_LOGGER = "saq"  # saq's worker and queues log through this one logger: each job's start and end at INFO

if TYPE_CHECKING:
    from saq.types import PartialTimersDict

    from application.ports.jobs import JobHandler
    from infrastructure.jobs.saq_job_queue import SaqJobQueue


class SaqJobWorker:
    def __init__(
        self, queue: SaqJobQueue, handler: JobHandler, concurrency: int, sweep_interval: int, grace: int = 10
    ) -> None:
        self._queue = queue
        self._handler = handler
        self._concurrency = concurrency
        self._sweep_interval = sweep_interval
        self._grace = grace
        self._worker: Worker[Any] | None = None

    async def run(self) -> None:
        """Run jobs until a signal, or `stop`."""
        timers: PartialTimersDict = {"schedule": 1, "worker_info": 10, "sweep": self._sweep_interval,
                                     "abort": ABORT_POLL}
        self._worker = Worker(
            self._queue.queue, functions=[(FUNCTION, self._run_job)], concurrency=self._concurrency,
            timers=timers, shutdown_grace_period_s=self._grace,
        )
        await self._worker.start()

    async def stop(self) -> None:
        if self._worker is not None:
            await self._worker.stop()

    async def _run_job(self, ctx: dict[str, Any], **fields: Any) -> None:
        attempt = ctx["job"]  # saq counts this attempt before it runs the function
        await self._handler(job_of(fields), attempt.attempts >= attempt.retries)
