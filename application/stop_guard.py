"""Lets a running turn notice a stop request between steps and between chunks."""

from __future__ import annotations

from application.ports.runtime import Clock
from application.ports.task_control import TaskControl
from domain.ids import TaskId


class StopRequested(Exception):
    """Raised inside a turn when its owner asked it to stop."""


class StopGuard:
    """Asks TaskControl at most every `interval` seconds, so a Redis lookup per chunk is avoided."""

    def __init__(self, tasks: TaskControl, task_id: TaskId, clock: Clock, interval: float) -> None:
        self._tasks = tasks
        self._task_id = task_id
        self._clock = clock
        self._interval = interval
        self._checked_at: float | None = None

    async def check(self, force: bool = False) -> None:
        now = self._clock.monotonic()
        if not force and self._checked_at is not None and now - self._checked_at < self._interval:
            return
        self._checked_at = now
        if await self._tasks.stop_requested(self._task_id):
            raise StopRequested
