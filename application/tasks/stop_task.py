"""StopTask: the owner asks a running turn to stop.

This only sets the task's stop flag. The worker running the turn notices it within one check
interval (`MEMAGENT_TURN__STOP_CHECK_INTERVAL`), even in the middle of a model stream or a tool
call, and cancels the turn's work there: see application/chat_turn/turn_watch.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.errors import Conflict, NotFound
from domain.conversation import MessageStatus

if TYPE_CHECKING:
    from application.ports.message_store import MessageStore
    from application.ports.task_control import TaskControl
    from domain.ids import OwnerId, TaskId


class StopTask:
    def __init__(self, tasks: TaskControl, store: MessageStore) -> None:
        self._tasks = tasks
        self._store = store

    async def __call__(self, task_id: TaskId, owner: OwnerId) -> None:
        info = await self._tasks.get(task_id)
        if info is None or info.owner != owner:
            raise NotFound(f"Task {task_id!r} was not found.")
        message = await self._store.get_message(info.message_id, owner)
        if message is not None and message.status is not MessageStatus.RUNNING:
            raise Conflict(f"Task {task_id!r} has already finished with status {message.status.value!r}.")
        if not await self._tasks.request_stop(task_id, owner):
            raise NotFound(f"Task {task_id!r} was not found.")
