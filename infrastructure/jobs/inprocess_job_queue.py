"""InProcessJobQueue: the job queue as asyncio tasks of this process, with the port's dedup and
retries. The fake the use cases' tests run on, held to the same contract as `SaqJobQueue`
(tests/contracts); the embedded default needs no queue: it runs the same work in process
(`AfterTurn`, `UpkeepScheduler` over `MemoryUpkeep`)."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING

from application.ports.jobs import JobQueue

if TYPE_CHECKING:
    from application.ports.jobs import JobHandler
    from domain.jobs import Job

log = logging.getLogger(__name__)


class InProcessJobQueue(JobQueue):
    def __init__(self, handler: JobHandler, retries: int = 3, retry_delay: float = 0.0) -> None:
        self._handler = handler
        self._retries = retries
        self._retry_delay = retry_delay
        self._running: dict[str, tuple[asyncio.Task[None], float]] = {}  # by key: the task, when queued

    async def enqueue(self, job: Job) -> bool:
        if job.key in self._running:
            return False
        task = asyncio.get_running_loop().create_task(self._attempts(job), name=f"job-{job.key}")
        self._running[job.key] = (task, time.monotonic())
        task.add_done_callback(lambda _: self._running.pop(job.key, None))
        return True

    async def wait(self, job: Job, within: float) -> bool:
        running = self._running.get(job.key)
        if running is None:
            return True
        done, _ = await asyncio.wait([running[0]], timeout=within)
        return bool(done)

    async def lag(self) -> float:
        queued = [at for _, at in self._running.values()]
        return max(0.0, time.monotonic() - min(queued)) if queued else 0.0

    async def drain(self) -> None:
        """Until every job queued so far has ended (tests)."""
        while self._running:
            await asyncio.wait([task for task, _ in self._running.values()])

    async def _attempts(self, job: Job) -> None:
        for attempt in range(1, self._retries + 1):
            try:
                await self._handler(job, attempt == self._retries)
                return
            except Exception:  # a job's failure is the queue's to retry, never its caller's
                log.warning("job %s failed (attempt %d of %d)", job.key, attempt, self._retries, exc_info=True)
                await asyncio.sleep(self._retry_delay * 2 ** (attempt - 1))
