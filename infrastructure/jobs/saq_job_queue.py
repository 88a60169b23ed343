"""SaqJobQueue: background jobs on Redis with saq (docs/ARCHITECTURE.md §10).

saq gives what the queue's port asks: at-least-once delivery (a job stays `active` until its
worker reports it; a job whose worker died is swept once it passes its `timeout`, then retried,
all such jobs together: `saq_sweep.py`),
retries with backoff for a job that raised, and one job per key while it waits or runs (the
port's dedup). Jobs are kept as JSON (`job_fields` / `job_of`), so any process can run them.

Its Redis client is its own (saq closes it on disconnect) and is built on first use: the
constructor does no I/O. Redis failures become `StoreUnavailable`.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from redis.asyncio import Redis
from redis.exceptions import RedisError

from application.errors import StoreUnavailable
from application.ports.jobs import JobQueue
from domain.ids import OwnerId
from domain.jobs import Job, JobKind
from infrastructure.jobs.saq_sweep import SweepingRedisQueue

if TYPE_CHECKING:
    from saq.queue.redis import RedisQueue

FUNCTION = "turn_job"  # the one saq function: it runs every kind of job
DONE = {"complete", "failed", "aborted"}  # saq's terminal statuses
POLL = 0.05  # seconds between two reads of a waited job
LAG_SAMPLE = 100  # jobs read to find the oldest not finished
_FAILURES = (RedisError, OSError)


@dataclass(frozen=True, slots=True)
class JobTimes:
    timeout: float  # seconds a job may run; past it a live worker cancels it, and a dead one's is swept
    retries: int  # attempts in all, the first included
    retry_delay: float  # seconds before the first retry, doubling after


def job_fields(job: Job) -> dict[str, Any]:
    return {"kind": job.kind.value, "owner": job.owner, "scope": job.scope, "subject": job.subject,
            "turns": job.turns}


def job_of(fields: dict[str, Any]) -> Job:
    return Job(JobKind(fields["kind"]), OwnerId(fields["owner"]), str(fields["scope"]), str(fields["subject"]),
               int(fields["turns"]))


class SaqJobQueue(JobQueue):
    def __init__(self, url: str, name: str, times: JobTimes) -> None:
        self._url = url
        self._name = name
        self._times = times
        self._queue: RedisQueue | None = None

    @property
    def queue(self) -> RedisQueue:
        """saq's queue, for the worker that runs these jobs."""
        if self._queue is None:
            self._queue = SweepingRedisQueue(Redis.from_url(self._url), name=self._name)
        return self._queue

    async def enqueue(self, job: Job) -> bool:
        try:
            queued = await self.queue.enqueue(
                FUNCTION, key=job.key, timeout=self._times.timeout, retries=self._times.retries,
                retry_delay=self._times.retry_delay, retry_backoff=True, **job_fields(job),
            )
        except _FAILURES as failure:
            raise StoreUnavailable(f"The job queue is unavailable ({type(failure).__name__}).") from None
        return queued is not None

    async def wait(self, job: Job, within: float) -> bool:
        """Polls the job's status: saq's pub/sub says only what changes after one subscribes, and the
        job may end before that. A job no longer kept (its result expired) ended long ago."""
        deadline = time.monotonic() + within
        while True:
            try:
                found = await self.queue.job(job.key)
            except _FAILURES as failure:
                raise StoreUnavailable(f"The job queue is unavailable ({type(failure).__name__}).") from None
            if found is None or _status(found.status) in DONE:
                return True
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(min(POLL, max(0.0, deadline - time.monotonic())))

    async def lag(self) -> float:
        try:
            info = await self.queue.info(jobs=True, limit=LAG_SAMPLE)
        except _FAILURES as failure:
            raise StoreUnavailable(f"The job queue is unavailable ({type(failure).__name__}).") from None
        queued = [job.get("queued", 0) for job in info["jobs"] if _status(job.get("status")) not in DONE]
        return max(0.0, time.time() - min(queued) / 1000) if queued else 0.0  # saq keeps milliseconds

    async def close(self) -> None:
        if self._queue is not None:
            queue, self._queue = self._queue, None
            with contextlib.suppress(*_FAILURES):
                await queue.disconnect()


def _status(status: object) -> str:
    return str(getattr(status, "value", status))

