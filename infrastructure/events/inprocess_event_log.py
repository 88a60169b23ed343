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


@dataclass(slots=True)
class _TaskLog(EventsInMemory):
    expires_at: float | None = None


class InProcessEventLog(EventLog):
    """Event logs in memory, for one server process: an append is stored at once, and wakes the
    readers waiting for it.

    A closed log is dropped once its retention has passed on `clock` (monotonic seconds; a test
    passes its own): every call first drops the logs due by then, so none outlives it for long.
    A read's `wait` is real time, on the event loop.
    """

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._logs: dict[TaskId, _TaskLog] = {}
        self._expiries: list[tuple[float, TaskId]] = []  # a heap: the next log due first
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
            try:
                async with asyncio.timeout(wait):
                    while len(log.events) <= after:
                        await log.grew.wait()
            except TimeoutError:
                return []
        return log.events[after:]

    async def close(self, task_id: TaskId, retention: float) -> None:
        self._drop_expired()
        log = self._logs.get(task_id)
        if log is None:
            return
        log.expires_at = self._clock() + retention
        heapq.heappush(self._expiries, (log.expires_at, task_id))

    def _drop_expired(self) -> None:
        now = self._clock()
        while self._expiries and self._expiries[0][0] <= now:
            due, task_id = heapq.heappop(self._expiries)
            log = self._logs.get(task_id)
            if log is not None and log.expires_at == due:  # not closed again since, with a later expiry
                del self._logs[task_id]
