"""StopMessage: stop the turn of a message (`POST /v1/chat/completions/{id}/cancel`, where the
completion's id is memagent's message id), by the rules of StopTask."""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.errors import NotFound

if TYPE_CHECKING:
    from application.ports.message_reader import MessageReader
    from application.tasks.stop_task import StopTask
    from domain.accounts.viewers import Viewer
    from domain.conversations.conversation import MessageStatus
    from domain.ids import MessageId


class StopMessage:
    def __init__(self, store: MessageReader, stop: StopTask) -> None:
        self._store = store
        self._stop = stop

    async def __call__(self, message_id: MessageId, viewer: Viewer) -> tuple[MessageStatus, str]:
        """How the turn ended (as StopTask says) and its task id."""
        message = await self._store.get_message(message_id, viewer.owner)
        if message is None or not viewer.sees_message(message):
            raise NotFound(f"Completion {message_id!r} was not found.")
        return await self._stop(message.task_id, viewer), message.task_id
