"""FollowTask: replay a task's events after a given id, then follow it live."""

from __future__ import annotations

from collections.abc import AsyncIterator

from application.errors import NotFound
from application.ports.event_log import EventLog, LoggedEvent
from application.ports.task_control import TaskControl, TaskInfo
from domain.ids import OwnerId, TaskId


class FollowTask:
    def __init__(self, tasks: TaskControl, events: EventLog, idle_wait: float) -> None:
        self._tasks = tasks
        self._events = events
        self._idle_wait = idle_wait

    async def owned(self, task_id: TaskId, owner: OwnerId) -> TaskInfo:
        """The task if `owner` owns it; anyone else is told it does not exist."""
        info = await self._tasks.get(task_id)
        if info is None or info.owner != owner:
            raise NotFound(f"Task {task_id!r} was not found.")
        return info

    async def __call__(self, task_id: TaskId, after: int = 0) -> AsyncIterator[LoggedEvent | None]:
        """Yields events up to the terminal one; None when idle for `idle_wait` (a keep-alive tick).

        Check ownership with `owned` first.
        """
        if after > 0:
            seen = await self._events.read(task_id, after - 1, 0)
            if seen and seen[0].thought.event.is_terminal:
                return  # the client already has the end; following would only ping forever
        while True:
            batch = await self._events.read(task_id, after, self._idle_wait)
            if not batch:
                yield None
                continue
            for logged in batch:
                yield logged
                after = logged.id
                if logged.thought.event.is_terminal:
                    return
