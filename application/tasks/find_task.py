"""FindTask: the task a viewer names, for following or stopping it; one lookup for both.

The task's record (owner, ids) lives in TaskControl, a fast store that can lose it mid-turn: Redis
flushed, or restarted without persistence. The turn's worker writes it again only with its next
lease renewal, seconds later, and a client told 404 in between gives up on a live turn. So a
record found missing is read from the task's message in the database: a turn still running there
is live, and its record is written again at once, so that a stop flag set next (which Redis sets
only for a registered owner) reaches the worker's stop watch. A finished turn missing from
TaskControl stays not found, as when its record expired with its events: nothing is left to follow.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.errors import NotFound
from application.ports.task_control import TaskInfo
from domain.conversations.conversation import MessageStatus

if TYPE_CHECKING:
    from application.ports.task_control import TaskControl
    from application.ports.task_messages import TaskMessages
    from domain.accounts.viewers import Viewer
    from domain.ids import TaskId


class FindTask:
    def __init__(self, tasks: TaskControl, messages: TaskMessages, task_ttl: float) -> None:
        self._tasks = tasks
        self._messages = messages
        self._task_ttl = task_ttl  # as long as the worker keeps the record it writes

    async def __call__(self, task_id: TaskId, viewer: Viewer) -> TaskInfo:
        """The task if the viewer may see it; anyone else is told it does not exist."""
        info = await self._tasks.get(task_id) or await self._running(task_id, viewer)
        if info is None or not info.visible_to(viewer):
            raise NotFound(f"Task {task_id!r} was not found.")
        return info

    async def _running(self, task_id: TaskId, viewer: Viewer) -> TaskInfo | None:
        """The record of a turn still running, rebuilt from its message, if the viewer may see it."""
        message = await self._messages.message_of_task(task_id, viewer.owner)
        if message is None or message.status is not MessageStatus.RUNNING:
            return None
        info = TaskInfo.of(message)
        if not info.visible_to(viewer):
            return None
        await self._tasks.register(info, self._task_ttl)
        return info
