from __future__ import annotations

import heapq
import time
from typing import TYPE_CHECKING

from application.ports.task_control import TaskControl, TaskInfo

if TYPE_CHECKING:
    from collections.abc import Callable

    from domain.ids import OwnerId, TaskId


class InProcessTaskControl(TaskControl):
    """Task owners and stop flags in memory, with expiry like their Redis twin.

    `clock` is the monotonic clock the expiries are read on (a test passes its own).
    """

    def __init__(self, stop_ttl: float = 600.0, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._tasks: dict[TaskId, tuple[TaskInfo, float]] = {}
        self._stops: dict[TaskId, float] = {}
        # When each entry lapses, soonest first: a turn nobody asks about again still goes.
        self._expiries: list[tuple[float, TaskId]] = []
        self._stop_ttl = stop_ttl
        self._clock = clock

    async def register(self, info: TaskInfo, ttl: float) -> None:
        self._drop_lapsed()
        deadline = self._clock() + ttl
        self._tasks[info.task_id] = (info, deadline)
        heapq.heappush(self._expiries, (deadline, info.task_id))

    async def get(self, task_id: TaskId) -> TaskInfo | None:
        entry = self._tasks.get(task_id)
        if entry is None or entry[1] < self._clock():
            self._tasks.pop(task_id, None)
            return None
        return entry[0]

    async def request_stop(self, task_id: TaskId, owner: OwnerId) -> bool:
        info = await self.get(task_id)
        if info is None or info.owner != owner:
            return False
        deadline = self._clock() + self._stop_ttl
        self._stops[task_id] = deadline
        heapq.heappush(self._expiries, (deadline, task_id))
        return True

    async def stop_requested(self, task_id: TaskId) -> bool:
        deadline = self._stops.get(task_id)
        if deadline is not None and deadline < self._clock():
            del self._stops[task_id]  # lapsed flags go, so the dict does not grow with every stop
            return False
        return deadline is not None

    def _drop_lapsed(self) -> None:
        """The tasks and stop flags past their deadline (one registered again later keeps its own)."""
        now = self._clock()
        while self._expiries and self._expiries[0][0] < now:
            deadline, task_id = heapq.heappop(self._expiries)
            entry = self._tasks.get(task_id)
            if entry is not None and entry[1] <= deadline:
                del self._tasks[task_id]
            if self._stops.get(task_id, now) <= deadline:
                self._stops.pop(task_id, None)
