"""SweepingRedisQueue: saq's Redis queue, with the jobs lost with a dead worker re-queued together.

saq's own `RedisQueue.sweep` (0.26) takes the stuck jobs of the active list one after another and,
for each, marks it aborting and waits up to `abort` seconds (5; its worker passes no other value)
for the worker running it to report the abort before it re-queues the job. A dead worker reports
nothing, so N jobs lost with it came back one every 5 s (issue 36). saq's API has no setting for
this, so this subclass overrides `sweep`: the same read of the active list under the same lock (one
sweep per `lock` seconds across workers), then every stuck job aborted, waited for and re-queued at
once, each with a shorter wait: two of the worker's abort polls, in which a live worker still
running the job cancels it.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from saq.job import Status
from saq.queue.redis import RedisQueue

ABORT_POLL = 1  # seconds between a worker's looks for its jobs marked aborting (its "abort" timer)
ABORT_WAIT = 2.0 * ABORT_POLL  # seconds a swept job waits for a live worker to report its abort

# saq's sweep script: under a lock held `lock` seconds, every active job's id and its stored body.
_ACTIVE_JOBS = """
local id_jobs = {}
if redis.call('EXISTS', KEYS[1]) == 0 then
    redis.call('SETEX', KEYS[1], ARGV[1], 1)
    for i, v in ipairs(redis.call('LRANGE', KEYS[2], 0, -1)) do
        id_jobs[i] = {v, redis.call('GET', v)}
    end
end
return id_jobs
"""

logger = logging.getLogger("saq")


class SweepingRedisQueue(RedisQueue):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._active_jobs = self.redis.register_script(_ACTIVE_JOBS)

    async def sweep(self, lock: int = 60, abort: float = ABORT_WAIT) -> list[str]:
        id_jobs = await self._active_jobs(keys=[self.namespace("sweep"), self.namespace("active")], args=[lock])
        swept = await asyncio.gather(*(self._sweep_one(job_id, body, abort) for job_id, body in id_jobs))
        return [job_id.decode("utf-8") for job_id in swept if job_id is not None]

    async def _sweep_one(self, job_id: bytes, body: bytes | None, abort: float) -> bytes | None:
        """What saq's sweep does with one active job: a stuck (or no longer active) one is aborted,
        then retried while it has attempts left; one whose body is gone is dropped from the lists."""
        job = self.deserialize(body)
        if job is None:
            key = job_id.decode("utf-8")
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.lrem(self.namespace("active"), 0, key)
                pipe.zrem(self.namespace("incomplete"), key)
                await pipe.execute()
            logger.info("Sweeping missing job %s", job_id)
            return job_id
        if job.status == Status.ACTIVE and not job.stuck:
            return None
        logger.info("Sweeping job %s", job.info(logger.isEnabledFor(logging.DEBUG)))
        await self.abort(job, error=self.swept_error_message)
        try:
            await job.refresh(abort)
        except TimeoutError:
            logger.info("Could not abort job %s", job_id)  # its worker is gone
        if job.retryable:
            await self.retry(job, error=self.swept_error_message)
        else:
            await self.finish(job, Status.ABORTED, error=self.swept_error_message)
        return job_id
