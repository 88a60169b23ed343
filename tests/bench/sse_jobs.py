"""The job queue of tests/bench/sse_load.py --job-workers: `memagent worker` processes on a throwaway
saq queue, when that queue has drained, and what its jobs waited and took.

The jobs' figures are read from the jobs themselves: saq keeps each one on Redis (`saq:job:<queue>:
<key>`, as JSON with its epoch-millisecond `queued`, `started` and `completed`) for ten minutes
after it ends, so a level's jobs are those queued since the level began.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis.asyncio as aioredis

from tests.bench.processes import process_tree
from tests.bench.sse_probe import cpu_cost, percentiles
from tests.integration.job_worker_processes import JobWorker, job_worker


@dataclass
class JobWorkers:
    redis_url: str
    queue: str
    workers: list[JobWorker]

    def pids(self) -> list[int]:
        for worker in self.workers:
            if worker.process.poll() is not None:
                raise RuntimeError(f"a job worker exited with {worker.process.returncode}:\n{worker.log()}")
        return [pid for worker in self.workers for pid in process_tree(worker.process.pid)]

    def stop(self) -> list[int]:
        """SIGTERM each (its running jobs finish first); their exit codes."""
        return [worker.stop() for worker in self.workers]

    async def drained(self, limit: float = 120.0) -> float:
        """Seconds until no job of the queue waits, runs or is scheduled for a retry (at most `limit`)."""
        began, client = time.monotonic(), aioredis.Redis.from_url(self.redis_url)
        try:
            while time.monotonic() - began < limit:
                async with client.pipeline(transaction=False) as pipe:
                    pipe.llen(f"saq:{self.queue}:queued")
                    pipe.llen(f"saq:{self.queue}:active")
                    pipe.zcard(f"saq:{self.queue}:incomplete")
                    if not any(await pipe.execute()):
                        break
                await asyncio.sleep(0.1)
        finally:
            await client.aclose()
        return round(time.monotonic() - began, 2)

    async def figures(self, since_ms: float, cpu_ms: dict[str, float], chunks: int, turns: int) -> dict[str, Any]:
        """The job workers' share of a level: their CPU until idle (the upkeep, titles and follow-ups
        moved out of the API), the API's and theirs together, and the level's jobs."""
        total = cpu_ms["server"] + cpu_ms["job_workers"]
        return {
            "processes": len(self.workers),
            **cpu_cost("job_worker", cpu_ms["job_workers"], chunks, turns),
            **cpu_cost("server_and_job_worker", total, chunks, turns),
            "jobs": await self.jobs_since(since_ms),
        }

    async def jobs_since(self, epoch_ms: float) -> dict[str, Any]:
        """The jobs queued since `epoch_ms`: how many, of which kind and status, retried, and how long
        they waited on the queue (the upkeep lag a turn's memory sees) and took until done."""
        client = aioredis.Redis.from_url(self.redis_url)
        try:
            keys = [key async for key in client.scan_iter(match=f"saq:job:{self.queue}:*", count=1000)]
            stored = await client.mget(keys) if keys else []
        finally:
            await client.aclose()
        jobs = [job for job in (json.loads(raw) for raw in stored if raw) if job.get("queued", 0) >= epoch_ms]
        ended = [job for job in jobs if job.get("completed")]
        return {
            "run": len(jobs),
            "by_kind": dict(Counter((job.get("kwargs") or {}).get("kind", "?") for job in jobs)),
            "by_status": dict(Counter(str(job.get("status")) for job in jobs)),
            "retried": sum(1 for job in jobs if job.get("attempts", 0) > 1),
            "by_worker_process": len({job.get("worker_id") for job in jobs if job.get("worker_id")}),
            "queue_wait_ms": percentiles([(job["started"] - job["queued"]) / 1000 for job in ended]),
            "queued_to_done_ms": percentiles([(job["completed"] - job["queued"]) / 1000 for job in ended]),
        }


def jobs_env(env: Mapping[str, str], queue: str) -> dict[str, str]:
    """memagent's settings with the job queue on Redis: the API queues, `memagent worker` runs."""
    return {**env, "MEMAGENT_JOBS__BACKEND": "redis", "MEMAGENT_JOBS__QUEUE": queue}


@contextmanager
def running_job_workers(env: Mapping[str, str], logs: Path, redis_url: str, queue: str,
                        count: int) -> Iterator[JobWorkers]:
    """`count` `memagent worker` processes with `env` (from `jobs_env`), stopped when the block ends."""
    with ExitStack() as stack:
        workers = [stack.enter_context(job_worker(env, logs, f"{queue}-{i}")) for i in range(count)]
        yield JobWorkers(redis_url, queue, workers)
