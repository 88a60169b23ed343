"""ReadMessage: one message (a turn's record), for a viewer who may see it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.conversations.visibility import visible_message

if TYPE_CHECKING:
    from application.ports.message_reader import MessageReader
    from domain.accounts.viewers import Viewer
    from domain.conversations.conversation import Message
    from domain.ids import MessageId


class ReadMessage:
    def __init__(self, store: MessageReader) -> None:
        self._store = store

    async def __call__(self, message_id: MessageId, viewer: Viewer) -> Message:
        """Raises NotFound for a message that is not there or not the viewer's."""
        return await visible_message(self._store, message_id, viewer)
