from __future__ import annotations

import time

from application.ports.task_presence import TaskPresence
from domain.ids import TaskId


class InProcessTaskPresence(TaskPresence):
    """Leases as deadlines in this process's memory: for one server process."""

    def __init__(self) -> None:
        self._workers: dict[TaskId, float] = {}
        self._clients: dict[TaskId, float] = {}

    async def worker_beat(self, task_id: TaskId, ttl: float) -> None:
        self._workers[task_id] = time.monotonic() + ttl

    async def worker_alive(self, task_id: TaskId) -> bool:
        return _holds(self._workers, task_id)

    async def client_beat(self, task_id: TaskId, ttl: float) -> None:
        self._clients[task_id] = time.monotonic() + ttl

    async def client_attached(self, task_id: TaskId) -> bool:
        return _holds(self._clients, task_id)


def _holds(leases: dict[TaskId, float], task_id: TaskId) -> bool:
    deadline = leases.get(task_id)
    if deadline is not None and deadline < time.monotonic():
        del leases[task_id]  # lapsed leases go, so the dicts do not grow with every turn
        return False
    return deadline is not None
