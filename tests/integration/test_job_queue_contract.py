"""The JobQueue contract, run against every adapter: in process, and saq on the real Redis (a
queue of its own, run by a `SaqJobWorker` in this process, its keys deleted afterwards)."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis

from application.errors import StoreUnavailable
from domain.ids import OwnerId
from domain.jobs import Job, JobKind
from infrastructure.jobs.inprocess_job_queue import InProcessJobQueue
from infrastructure.jobs.saq_job_queue import JobTimes, SaqJobQueue
from infrastructure.jobs.saq_job_worker import SaqJobWorker
from tests.integration.redis_fixtures import DEAD_REDIS_URL, REDIS_URL

pytestmark = pytest.mark.integration

TIMES = JobTimes(timeout=30, retries=3, retry_delay=0)
SETTLE = 10.0  # seconds a job gets to run on a busy machine


def job(message: str = "m1", kind: JobKind = JobKind.UPKEEP, turns: int = 1) -> Job:
    return Job(kind, OwnerId("alice"), "c1", message, turns)


class Handler:
    """Records each run; holds runs while `hold` is clear; fails the first `failures` runs."""

    def __init__(self) -> None:
        self.runs: list[Job] = []
        self.last_tries: list[bool] = []
        self.ran_once = asyncio.Condition()
        self.hold = asyncio.Event()
        self.hold.set()
        self.failures = 0
        self.started = asyncio.Event()

    async def __call__(self, job: Job, last_try: bool) -> None:
        async with self.ran_once:
            self.runs.append(job)
            self.last_tries.append(last_try)
            self.ran_once.notify_all()
        self.started.set()
        await self.hold.wait()
        if self.failures:
            self.failures -= 1
            raise RuntimeError("a failing job")

    async def ran(self, times: int) -> None:
        async with asyncio.timeout(SETTLE), self.ran_once:
            await self.ran_once.wait_for(lambda: len(self.runs) >= times)


@pytest.fixture(params=["inprocess", "saq"])
async def queued(request: pytest.FixtureRequest) -> AsyncIterator[tuple[InProcessJobQueue | SaqJobQueue, Handler]]:
    handler = Handler()
    if request.param == "inprocess":
        inprocess = InProcessJobQueue(handler, retries=TIMES.retries)
        yield inprocess, handler
        handler.hold.set()
        await inprocess.drain()
        return
    name = f"memagent-test-{secrets.token_hex(4)}"
    saq = SaqJobQueue(REDIS_URL, name, TIMES)
    # No sweep within a test: saq's sweep retries a job it finds on the active list before the
    # worker has marked it active (at-least-once delivery), so a sweep every second, on a busy
    # machine, now and then ran a job twice here. A killed worker's job: test_job_workers.py.
    # saq's worker sweeps once as it starts, too, and a job it had just taken could be that sweep's:
    # sweeping the empty queue first holds the sweep's lock (60 s) past the test.
    await saq.queue.sweep(lock=60)
    worker = SaqJobWorker(saq, handler, concurrency=4, sweep_interval=60, grace=1)
    running = asyncio.create_task(worker.run())
    try:
        yield saq, handler
    finally:
        handler.hold.set()
        await worker.stop()
        with contextlib.suppress(asyncio.CancelledError):
            await running
        await saq.close()
        redis = Redis.from_url(REDIS_URL)
        keys = [key async for key in redis.scan_iter(match=f"saq:*{name}*")]
        if keys:
            await redis.delete(*keys)
        await redis.aclose()


async def test_a_queued_job_runs_once_with_every_field_it_was_queued_with(queued: tuple) -> None:
    queue, handler = queued
    assert await queue.enqueue(job("m1", JobKind.TITLE, 3))
    await handler.ran(1)
    assert await queue.wait(job("m1", JobKind.TITLE, 3), SETTLE)
    assert handler.runs == [job("m1", JobKind.TITLE, 3)]


async def test_a_job_whose_key_waits_or_runs_already_is_not_queued_again(queued: tuple) -> None:
    queue, handler = queued
    handler.hold.clear()
    assert await queue.enqueue(job("m1"))
    await asyncio.wait_for(handler.started.wait(), SETTLE)
    assert not await queue.enqueue(job("m1"))  # running: it covers this one
    assert await queue.enqueue(job("m1", JobKind.TITLE))  # another kind is another job
    handler.hold.set()
    assert await queue.wait(job("m1"), SETTLE)
    await handler.ran(2)
    assert sorted(j.kind for j in handler.runs) == [JobKind.TITLE, JobKind.UPKEEP]


async def test_waiting_for_a_job_says_whether_it_ended_in_time(queued: tuple) -> None:
    queue, handler = queued
    handler.hold.clear()
    await queue.enqueue(job("m2"))
    await asyncio.wait_for(handler.started.wait(), SETTLE)
    assert not await queue.wait(job("m2"), 0.2)
    handler.hold.set()
    assert await queue.wait(job("m2"), SETTLE)


async def test_a_job_that_fails_is_retried_until_it_succeeds(queued: tuple) -> None:
    queue, handler = queued
    handler.failures = 2
    await queue.enqueue(job("m3"))
    await handler.ran(3)
    assert await queue.wait(job("m3"), SETTLE)
    assert handler.runs == [job("m3")] * 3


async def test_the_lag_is_the_age_of_the_oldest_job_not_finished(queued: tuple) -> None:
    queue, handler = queued
    assert await queue.lag() == 0.0
    handler.hold.clear()
    await queue.enqueue(job("m4"))
    await asyncio.wait_for(handler.started.wait(), SETTLE)
    await asyncio.sleep(0.3)
    assert await queue.lag() >= 0.2
    handler.hold.set()
    assert await queue.wait(job("m4"), SETTLE)
    assert await queue.lag() == 0.0


async def test_an_unreachable_redis_is_a_store_unavailable_error_naming_no_host() -> None:
    queue = SaqJobQueue(DEAD_REDIS_URL, "memagent-test-dead", TIMES)
    with pytest.raises(StoreUnavailable) as failure:
        await queue.enqueue(job())
    assert "127.0.0.1" not in failure.value.message
    assert "redis://" not in failure.value.message
    await queue.close()


async def test_a_handler_is_told_which_attempt_is_the_last(queued: tuple) -> None:
    queue, handler = queued
    handler.failures = TIMES.retries  # every attempt fails
    await queue.enqueue(job("m5"))
    await handler.ran(TIMES.retries)
    assert await queue.wait(job("m5"), SETTLE)
    assert handler.last_tries == [False] * (TIMES.retries - 1) + [True]
