"""DeleteConversation: a soft delete. The conversation leaves every list and read at once and takes
no more turns; a turn still running is stopped (its record kept), then the memory is forgotten.
The rows stay in the database until retention removes them."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Protocol

from application.conversations.visibility import visible_conversation
from application.errors import NotFound
from application.ports.conversation_reader import ConversationReader
from application.ports.conversation_writer import ConversationWriter
from application.settle import settled
from domain.conversations.conversation import MessageStatus

if TYPE_CHECKING:
    from application.ports.conversation_cleanup import MemoryEraser
    from application.ports.runtime import Clock
    from application.ports.task_control import TaskControl
    from domain.accounts.viewers import Viewer
    from domain.conversations.conversation import Message
    from domain.ids import ConversationId

class _Store(ConversationReader, ConversationWriter, Protocol):
    """The record the conversation is read from and deleted from."""


log = logging.getLogger(__name__)


class DeleteConversation:
    def __init__(
        self, store: _Store, tasks: TaskControl, memory: MemoryEraser, clock: Clock, settle: float = 5.0
    ) -> None:
        self._store = store
        self._tasks = tasks
        self._memory = memory
        self._clock = clock
        self._settle = settle

    async def __call__(self, conversation_id: ConversationId, viewer: Viewer) -> None:
        conversation = await visible_conversation(self._store, conversation_id, viewer)
        # Deleted first, so that no turn opens in it from now on (opening a turn locks the same row).
        if not await self._store.delete_conversation(conversation_id, conversation.owner, self._clock.now()):
            raise NotFound(f"Conversation {conversation_id!r} was not found.")
        latest = await self._store.latest_message(conversation_id)
        if latest is not None and latest.status is MessageStatus.RUNNING:
            await self._tasks.request_stop(latest.task_id, conversation.owner)
            if not await self._ended(conversation_id):
                log.warning("conversation %s: deleted while its turn %s had not stopped yet",
                            conversation_id, latest.task_id)
        # After the turn ended: a turn still writing would put back what is forgotten.
        await self._memory.erase(conversation_id)

    async def _ended(self, conversation_id: ConversationId) -> bool:
        """Whether the conversation's last turn ended within `settle` seconds."""

        def ended(latest: Message | None) -> bool:
            return latest is None or latest.status is not MessageStatus.RUNNING

        return ended(await settled(lambda: self._store.latest_message(conversation_id), ended, self._settle))
