from __future__ import annotations

import time
from typing import TYPE_CHECKING

from application.ports.task_presence import TaskPresence

if TYPE_CHECKING:
    from collections.abc import Callable

    from domain.ids import TaskId


class InProcessTaskPresence(TaskPresence):
    """Leases as deadlines in this process's memory: for one server process.

    `clock` is the monotonic clock the leases run on (a test passes its own).
    """

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._workers: dict[TaskId, float] = {}
        self._clients: dict[TaskId, float] = {}
        self._clock = clock

    async def worker_beat(self, task_id: TaskId, ttl: float) -> None:
        self._workers[task_id] = self._clock() + ttl

    async def worker_alive(self, task_id: TaskId) -> bool:
        return self._holds(self._workers, task_id)

    async def client_beat(self, task_id: TaskId, ttl: float) -> None:
        self._clients[task_id] = self._clock() + ttl

    async def client_attached(self, task_id: TaskId) -> bool:
        return self._holds(self._clients, task_id)

    def _holds(self, leases: dict[TaskId, float], task_id: TaskId) -> bool:
        deadline = leases.get(task_id)
        if deadline is not None and deadline < self._clock():
            del leases[task_id]  # lapsed leases go, so the dicts do not grow with every turn
            return False
        return deadline is not None
