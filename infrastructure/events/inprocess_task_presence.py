from __future__ import annotations

import time
from typing import TYPE_CHECKING

from application.ports.task_presence import TaskPresence

if TYPE_CHECKING:
    from collections.abc import Callable

    from domain.ids import TaskId

SWEEP_FLOOR = 64  # leases held before the first sweep


class _Leases:
    """Deadlines by task. Nobody asks about a finished turn again, so a lapsed lease is also dropped
    by a sweep, once the leases doubled since the last one: they never grow with every turn."""

    def __init__(self) -> None:
        self.deadlines: dict[TaskId, float] = {}
        self._swept_at = SWEEP_FLOOR

    def renew(self, task_id: TaskId, deadline: float, now: float) -> None:
        self.deadlines[task_id] = deadline
        if len(self.deadlines) >= 2 * self._swept_at:
            for lapsed in [task for task, until in self.deadlines.items() if until < now]:
                del self.deadlines[lapsed]
            self._swept_at = max(SWEEP_FLOOR, len(self.deadlines))

    def clear(self) -> None:
        """Every lease gone, as a Redis FLUSHALL would."""
        self.deadlines.clear()

    def holds(self, task_id: TaskId, now: float) -> bool:
        deadline = self.deadlines.get(task_id)
        if deadline is not None and deadline < now:
            del self.deadlines[task_id]
            return False
        return deadline is not None


class InProcessTaskPresence(TaskPresence):
    """Leases as deadlines in this process's memory: for one server process.

    `clock` is the monotonic clock the leases run on (a test passes its own).
    """

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._workers = _Leases()
        self._clients = _Leases()
        self._clock = clock

    async def worker_beat(self, task_id: TaskId, ttl: float) -> None:
        now = self._clock()
        self._workers.renew(task_id, now + ttl, now)

    async def worker_alive(self, task_id: TaskId) -> bool:
        return self._workers.holds(task_id, self._clock())

    async def client_beat(self, task_id: TaskId, ttl: float) -> None:
        now = self._clock()
        self._clients.renew(task_id, now + ttl, now)

    async def client_attached(self, task_id: TaskId) -> bool:
        return self._clients.holds(task_id, self._clock())
