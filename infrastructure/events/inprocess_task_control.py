from __future__ import annotations

import time

from application.ports.task_control import TaskControl, TaskInfo
from domain.ids import OwnerId, TaskId


class InProcessTaskControl(TaskControl):
    """Task owners and stop flags in memory, with expiry like their Redis twin."""

    def __init__(self, stop_ttl: float = 600.0) -> None:
        self._tasks: dict[TaskId, tuple[TaskInfo, float]] = {}
        self._stops: dict[TaskId, float] = {}
        self._stop_ttl = stop_ttl

    async def register(self, info: TaskInfo, ttl: float) -> None:
        self._tasks[info.task_id] = (info, time.monotonic() + ttl)

    async def get(self, task_id: TaskId) -> TaskInfo | None:
        entry = self._tasks.get(task_id)
        if entry is None or entry[1] < time.monotonic():
            self._tasks.pop(task_id, None)
            return None
        return entry[0]

    async def request_stop(self, task_id: TaskId, owner: OwnerId) -> bool:
        info = await self.get(task_id)
        if info is None or info.owner != owner:
            return False
        self._stops[task_id] = time.monotonic() + self._stop_ttl
        return True

    async def stop_requested(self, task_id: TaskId) -> bool:
        deadline = self._stops.get(task_id)
        return deadline is not None and deadline >= time.monotonic()
