"""Watches a running turn from beside it: a stop request, a client gone, the worker's lease.

The turn's work (recall, the model stream, tool calls) runs as its own task while `TurnWatch.run`
polls beside it every `stop_check_interval` (on a grid shared by all turns, so their checks
batch). A stop is therefore seen even while the model stalls mid-stream: `run` cancels the work
task, `AgentLoop._step`'s `aclosing` closes the upstream model stream, tokens stop being spent, and
`StopRequested` tells `RunChatTurn` to save the partial answer with status `stop`.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from application.errors import ApplicationError

if TYPE_CHECKING:
    from collections.abc import Coroutine, Iterator

    from application.ports.runtime import Clock
    from application.ports.task_control import TaskControl, TaskInfo
    from application.ports.task_presence import TaskPresence

log = logging.getLogger(__name__)


class StopReason(enum.StrEnum):
    REQUESTED = "requested"
    CLIENT_GONE = "client_gone"
    NO_TOOL_RESULTS = "no_tool_results"  # paused for the client's tools, whose results never came


class StopRequested(Exception):
    """The turn was stopped: by its owner, or because no client followed it any more."""

    def __init__(self, reason: StopReason) -> None:
        super().__init__(reason.value)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class WatchTimes:
    stop_check_interval: float = 0.2
    client_grace: float = 30.0
    worker_lease: float = 15.0
    task_ttl: float = 1800.0  # how long the task record (owner, ids) lives while the turn runs


def until_next_check(now: float, every: float) -> float:
    """Seconds from `now` to the next multiple of `every`, in (0, every].

    Checks fall on this grid, shared by every turn of the process, so that the checks of many
    turns coincide and a backend can answer them together (one round trip instead of one each).
    """
    return every - now % every


class TurnWatch:
    """Beside a running turn: renews the worker's lease and the task record, and asks for a stop.

    A backend that lost its records (Redis flushed, or restarted without persistence) is
    survived: the task record (owner, ids) is written again with every lease renewal, so the
    owner can still stop and follow the turn; and a client lease found missing while the
    worker's own lease is missing too means the records were lost, not that the client left,
    so the client gets a whole grace period to beat again.
    """

    def __init__(
        self, tasks: TaskControl, presence: TaskPresence, clock: Clock, info: TaskInfo, times: WatchTimes
    ) -> None:
        self._tasks = tasks
        self._presence = presence
        self._clock = clock
        self._info = info
        self._task_id = info.task_id
        self._times = times
        self._last_client_check: float | None = None
        self._grace_from: float | None = None  # a missing client lease is no client gone within a grace of this
        self._beaten = False
        self._paused = False

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """While the turn waits for its client's tool results no client follows it, and none needs
        to: only a stop is watched for. The client that resumes it gets a whole grace period."""
        self._paused = True
        try:
            yield
        finally:
            self._paused = False
            self._grace_from = self._clock.monotonic()

    async def run(self, work: Coroutine[Any, Any, None]) -> None:
        """Run `work` to its end, or raise StopRequested once it is stopped and cancelled."""
        job = asyncio.ensure_future(work)
        # Starting the turn counts as a client attached: the grace period runs from here, kept here
        # rather than as a client lease written for it (a round trip at every turn's start).
        self._grace_from = self._clock.monotonic()
        try:
            await self._watch(job)
        finally:
            if not job.done():
                job.cancel()
                await asyncio.gather(job, return_exceptions=True)

    async def _watch(self, job: asyncio.Future[None]) -> None:
        times = self._times
        beat_every = times.worker_lease / 3
        last_beat = None
        while True:
            now = self._clock.monotonic()
            if last_beat is None or now - last_beat >= beat_every:
                last_beat = now if await self._beat() else last_beat
            done, _ = await asyncio.wait({job}, timeout=self._until_next_check())
            if done:
                return job.result()
            reason = await self._stop_reason()
            if reason is not None:
                raise StopRequested(reason)

    async def _beat(self) -> bool:
        try:
            # Our lease is renewed long before it lapses: found missing, the store lost its records.
            if self._beaten and not await self._presence.worker_alive(self._task_id):
                self._records_lost()
            await self._presence.worker_beat(self._task_id, self._times.worker_lease)
            if self._beaten:  # renewed: LaunchTurn registered the task just before the first beat
                await self._tasks.register(self._info, self._times.task_ttl)
        except ApplicationError as failure:
            log.warning("turn %s: could not renew its worker lease: %s", self._task_id, failure.message)
            return False
        self._beaten = True
        return True

    def _records_lost(self) -> None:
        log.warning("turn %s: the presence records were lost; the client gets a grace period", self._task_id)
        self._grace_from = self._clock.monotonic()

    async def _stop_reason(self) -> StopReason | None:
        try:
            if await self._tasks.stop_requested(self._task_id):
                return StopReason.REQUESTED
            if self._paused or not self._client_check_due():
                return None
            if not await self._presence.client_attached(self._task_id):
                return StopReason.CLIENT_GONE if await self._client_left() else None
        except ApplicationError as failure:
            # A failed check is no news: the turn goes on and the next interval asks again.
            log.warning("turn %s: could not check for a stop: %s", self._task_id, failure.message)
        return None

    async def _client_left(self) -> bool:
        """The client's lease is missing: it left, unless the turn started, or the backend lost its
        records (which shows in the worker's own lease missing too: it is renewed long before it
        lapses), less than a grace period ago."""
        if not await self._presence.worker_alive(self._task_id):
            self._records_lost()
            await self._beat()
            return False
        now, since = self._clock.monotonic(), self._grace_from
        return since is None or now - since >= self._times.client_grace

    def _until_next_check(self) -> float:
        return until_next_check(self._clock.monotonic(), self._times.stop_check_interval)

    def _client_check_due(self) -> bool:
        # A gone client has `client_grace` to come back, so its lease needs far fewer checks than a
        # stop does; each check is a round trip to a shared backend, for every running turn.
        every = max(self._times.stop_check_interval, self._times.client_grace / 10)
        now = self._clock.monotonic()
        if self._last_client_check is not None and now - self._last_client_check < every:
            return False
        self._last_client_check = now
        return True
