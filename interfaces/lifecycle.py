"""Start-up checks and shutdown of the backends the container built.

Every worker of `memagent serve --workers N` (or every server process) runs all of this, side by
side, and each step is safe so: the schema is only read (`serve` never migrates PostgreSQL); the
default agent is created under its primary key and published by compare-and-set, so one worker
does it and the others find it done; MCP tool servers are each worker's own, and write nothing
shared; a stale turn is finished only while it is still `running` in the database, so two
sweepers never end it twice; the prune takes a lock that lets one worker through at a time.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
from typing import TYPE_CHECKING, Any

from application.errors import ApplicationError

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Coroutine, Iterator

    from interfaces.settings.settings import Settings
    from interfaces.wiring.container import Container

log = logging.getLogger(__name__)

SHUTDOWN_GRACE = 10.0


def uses_redis(settings: Settings) -> bool:
    return "redis" in (settings.memory.backend, settings.events.backend, settings.jobs.backend)


DEFAULT_GC_THRESHOLD = (700, 10, 10)  # CPython's


@contextlib.contextmanager
def frozen_startup_heap() -> Iterator[None]:
    """Keeps what start-up built (modules, the container, its clients: objects that live as long as
    the process) out of the garbage collector's full passes while the app runs. A full pass walks
    every tracked object, and with this heap each one paused the event loop for 100 to 240 ms,
    stalling every stream at once (tests/bench/sse_load.py); frozen, a pass walks only what came
    since. Unfrozen at shutdown, so that an app started again in the same process starts afresh.
    Collections go back to their default pace (the command line makes them rarer while it starts)."""
    gc.collect()  # start-up's garbage is freed, not frozen
    gc.freeze()
    gc.set_threshold(*DEFAULT_GC_THRESHOLD)
    try:
        yield
    finally:
        gc.unfreeze()


async def start_backends(container: Container, settings: Settings) -> None:
    """Connect to what the settings name; raises ApplicationError with one readable line. Then the
    platform's default agent is brought in step with the MEMAGENT_AGENT__* settings."""
    container.chat_models()  # reads MEMAGENT_MODELS' keys now: one that cannot be read stops start-up
    await container.database().start()
    if uses_redis(settings):
        await container.redis().ping()
    version = await container.agents.ensure_default()(container.default_agent_config())
    log.info("the default agent runs version %d", version)


async def stop_backends(container: Container) -> None:
    await container.spawner().drain(SHUTDOWN_GRACE)
    # Turns still waiting for their (lazy) upkeep get it now, within the grace; past it, the summary's
    # cursor has the next upkeep of the conversation cover them.
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(container.memory.upkeep_scheduler().flush(), SHUTDOWN_GRACE)
    await container.model_calls.record().close()  # the calls the drained turns and upkeeps made: a last try
    await container.chat_models().aclose()  # the profiles' models; default is chat_model, closed below
    model = container.chat_model()
    close_model = getattr(model, "aclose", None)  # providers with a connection pool have one
    if close_model is not None:
        await close_model()
    await container.workflows.outbound_http().aclose()  # http_request nodes' connection pool
    await container.job_queue().close()
    await container.redis().close()
    await container.database().dispose()


async def _sweep_forever(container: Container, interval: float) -> None:
    sweep = container.sweep_stale_turns()
    while True:
        try:
            await sweep()
        except ApplicationError as failure:  # the next sweep tries again; serving goes on
            log.error("sweep of stale turns failed: %s", failure.message)
        await asyncio.sleep(interval)


async def _report_forever(container: Container, interval: float, queued: bool) -> None:
    """The upkeep lag: the job queue's when job workers run the upkeep, else this process's."""
    metrics, upkeep, jobs = container.metrics(), container.memory.upkeep_scheduler(), container.job_queue()
    while True:
        try:
            metrics.upkeep_lag(await jobs.lag() if queued else upkeep.lag())
        except ApplicationError as failure:  # the next report tries again
            log.warning("upkeep lag not read: %s", failure.message)
        await asyncio.sleep(interval)


@contextlib.asynccontextmanager
async def _in_background(work: Coroutine[Any, Any, None], name: str) -> AsyncIterator[None]:
    """`work` runs as a task while the block runs, and is cancelled (and awaited) when it ends."""
    task = asyncio.create_task(work, name=name)
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


@contextlib.asynccontextmanager
async def metrics_reporting(container: Container, settings: Settings) -> AsyncIterator[None]:
    """The upkeep lag, which grows with no event to tell it, set every `metrics.refresh_interval`;
    at the end this worker leaves the metrics' shared folder (its live gauges stop counting)."""
    try:
        queued = settings.jobs.backend == "redis"
        async with _in_background(_report_forever(container, settings.metrics.refresh_interval, queued), "metrics"):
            yield
    finally:
        container.metrics().close()


async def _prune_forever(container: Container, interval: float) -> None:
    prune = container.retention.prune()
    while True:
        try:
            await prune()
        except ApplicationError as failure:  # the next prune takes up where this one stopped
            log.error("scheduled prune failed: %s", failure.message)
        await asyncio.sleep(interval)


@contextlib.asynccontextmanager
async def retention_pruner(container: Container, settings: Settings) -> AsyncIterator[None]:
    """Prune at start-up and then every `retention.interval` (0: only `memagent prune`); every worker
    runs it, the prune lock lets one at a time through. Cancelled at shutdown: a batch under way is
    rolled back, and the next prune does it again."""
    if not settings.retention.interval:
        yield
        return
    async with _in_background(_prune_forever(container, settings.retention.interval), "pruner"):
        yield


@contextlib.asynccontextmanager
async def stale_turn_sweeper(container: Container, settings: Settings) -> AsyncIterator[None]:
    """Sweep at start-up (turns of a process that died) and then every `sweep_interval`."""
    async with _in_background(_sweep_forever(container, settings.turn.sweep_interval), "sweeper"):
        yield
