"""StopTask: the owner asks a running turn to stop, and hears how it ended.

The request sets the task's stop flag. The worker running the turn notices it within one check
interval (`MEMAGENT_TURN__STOP_CHECK_INTERVAL`), even in the middle of a model stream or a tool
call, and cancels the turn's work there: see application/chat_turn/turn_watch.py.

A stop can come too late: the turn may end on its own between the request and the check. So the
stop then waits (for at most `settle` seconds, polling the record with a growing interval) for
the turn's stored status: `stop` when the stop took effect; a turn that ended otherwise first is
a `Conflict` naming its final status; a turn still running after `settle` is reported as such.

The task is found by FindTask, so a stop still reaches a running turn whose record TaskControl
lost (Redis flushed or restarted mid-turn).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.errors import Conflict, NotFound
from application.settle import settled
from domain.conversations.conversation import MessageStatus

if TYPE_CHECKING:
    from application.ports.message_reader import MessageReader
    from application.ports.task_control import TaskControl, TaskInfo
    from application.tasks.find_task import FindTask
    from domain.accounts.viewers import Viewer
    from domain.ids import TaskId


class StopTask:
    def __init__(self, find: FindTask, tasks: TaskControl, store: MessageReader, settle: float = 5.0) -> None:
        self._find = find
        self._tasks = tasks
        self._store = store
        self._settle = settle

    async def __call__(self, task_id: TaskId, viewer: Viewer) -> MessageStatus:
        """`STOP` once the turn stopped, or `RUNNING` when it had not ended within `settle` seconds."""
        info = await self._find(task_id, viewer)
        await self._refuse_if_finished(info)
        if not await self._tasks.request_stop(task_id, viewer.owner):
            raise NotFound(f"Task {task_id!r} was not found.")
        status = await self._final_status(info)
        if status not in (MessageStatus.STOP, MessageStatus.RUNNING):
            raise Conflict(f"Task {task_id!r} finished with status {status.value!r} before the stop took effect.")
        return status

    async def _refuse_if_finished(self, info: TaskInfo) -> None:
        message = await self._store.get_message(info.message_id, info.owner)
        if message is None:  # its conversation was deleted
            raise NotFound(f"Task {info.task_id!r} was not found.")
        if message.status is not MessageStatus.RUNNING:
            raise Conflict(f"Task {info.task_id!r} has already finished with status {message.status.value!r}.")

    async def _final_status(self, info: TaskInfo) -> MessageStatus:
        message = await settled(
            lambda: self._store.get_message(info.message_id, info.owner),
            lambda found: found is None or found.status is not MessageStatus.RUNNING,
            self._settle,
        )
        return MessageStatus.RUNNING if message is None else message.status
