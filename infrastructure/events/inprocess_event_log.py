from __future__ import annotations

import asyncio
import heapq
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from application.ports.event_log import EventLog, LoggedEvent
from infrastructure.events.events_in_memory import EventsInMemory

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from domain.conversations.thoughts import AgentThought
    from domain.ids import TaskId


MAX_CLOSED_LOGS = 1000  # kept for replay; past it the ones due first go early (about 8 KB a short turn)


@dataclass(slots=True)
class _TaskLog(EventsInMemory):
    expires_at: float | None = None
    waiting: int = 0  # readers waiting for its first events


class InProcessEventLog(EventLog):
    """Event logs in memory, for one server process: an append is stored at once, and wakes the
    readers waiting for it.

    A closed log is dropped once its retention has passed on `clock` (monotonic seconds; a test
    passes its own): every call first drops the logs due by then, so none outlives it for long.
    At most `max_closed` closed logs are kept: past that, those due first go at once, so memory is
    bounded by the turns in flight, not by the turns of the last hour. A read's `wait` is real
    time, on the event loop.
    """

    def __init__(self, *, clock: Callable[[], float] = time.monotonic, max_closed: int = MAX_CLOSED_LOGS) -> None:
        self._logs: dict[TaskId, _TaskLog] = {}
        self._expiries: list[tuple[float, TaskId]] = []  # a heap: the next log due first
        self._closed = 0  # logs with an expiry, in `_logs`
        self._max_closed = max_closed
        self._clock = clock

    async def open(self, task_id: TaskId) -> None:
        """Every follower of this log is in this process already."""

    async def append(self, task_id: TaskId, thought: AgentThought) -> int:
        return await self.append_many(task_id, [thought])

    async def append_past_unseen(self, task_id: TaskId, thought: AgentThought) -> int:
        # Followers of an in-process log share its process: none saw an id the log lacks.
        return await self.append(task_id, thought)

    async def append_many(self, task_id: TaskId, thoughts: Sequence[AgentThought]) -> int:
        return await self.append_soon(task_id, thoughts)

    def append_soon(self, task_id: TaskId, thoughts: Sequence[AgentThought]) -> asyncio.Future[int]:
        if not thoughts:
            raise ValueError("an append needs at least one event")
        self._drop_expired()
        last_id = self._logs.setdefault(task_id, _TaskLog()).add(thoughts)
        stored: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        stored.set_result(last_id)
        return stored

    async def read(self, task_id: TaskId, after: int, wait: float) -> list[LoggedEvent]:
        self._drop_expired()
        log = self._logs.get(task_id)
        if log is None and wait <= 0:
            return []
        if log is None:
            log = self._logs.setdefault(task_id, _TaskLog())
        if len(log.events) <= after and wait > 0:
            log.waiting += 1
            try:
                async with asyncio.timeout(wait):
                    while len(log.events) <= after:
                        await log.grew.wait()
            except TimeoutError:
                return []
            finally:
                log.waiting -= 1
                self._forget_unused(task_id, log)
        return log.events[after:]

    async def close(self, task_id: TaskId, retention: float) -> None:
        self._drop_expired()
        log = self._logs.get(task_id)
        if log is None:
            return
        self._closed += log.expires_at is None
        log.expires_at = self._clock() + retention
        heapq.heappush(self._expiries, (log.expires_at, task_id))
        while self._closed > self._max_closed:
            self._drop_next()

    def _drop_expired(self) -> None:
        now = self._clock()
        while self._expiries and self._expiries[0][0] <= now:
            self._drop_next()

    def _drop_next(self) -> None:
        """The log due first goes (a heap entry of a log closed again since, with a later expiry, is stale)."""
        due, task_id = heapq.heappop(self._expiries)
        log = self._logs.get(task_id)
        if log is not None and log.expires_at == due:
            del self._logs[task_id]
            self._closed -= 1

    def _forget_unused(self, task_id: TaskId, log: _TaskLog) -> None:
        """A log a reader made to wait on, and nobody appended to or waits on any more: no turn
        will close it, so it would never expire."""
        if not log.events and not log.waiting and log.expires_at is None and self._logs.get(task_id) is log:
            del self._logs[task_id]
