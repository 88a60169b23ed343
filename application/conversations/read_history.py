"""Queries over the record: a conversation's messages and a message's steps."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from application.conversations.visibility import visible_conversation, visible_message
from application.errors import InvalidInput
from application.ports.conversation_reader import ConversationReader
from application.ports.message_reader import MessageReader

if TYPE_CHECKING:
    from domain.accounts.viewers import Viewer
    from domain.conversations.conversation import Conversation, Message, MessageAgentThought
    from domain.ids import ConversationId, MessageId

class _Store(MessageReader, ConversationReader, Protocol):
    """The record a conversation's messages and a message's steps are read from."""


MAX_PAGE = 100


class ReadHistory:
    def __init__(self, store: _Store) -> None:
        self._store = store

    async def messages(
        self, conversation_id: ConversationId, viewer: Viewer, offset: int, limit: int
    ) -> tuple[Conversation, list[Message]]:
        """The conversation (its agent) and a page of its messages, oldest first; a regenerated
        answer is listed beside its siblings, marked `superseded` once a newer one completed."""
        if offset < 0 or not 1 <= limit <= MAX_PAGE:
            raise InvalidInput(f"offset must be >= 0 and limit within 1..{MAX_PAGE}.")
        conversation = await visible_conversation(self._store, conversation_id, viewer)
        return conversation, await self._store.list_messages(conversation_id, offset, limit)

    async def steps(
        self, message_id: MessageId, viewer: Viewer
    ) -> tuple[Conversation, Message, list[MessageAgentThought]]:
        """The message with its conversation (its agent), and the message's steps by position."""
        message = await visible_message(self._store, message_id, viewer)
        conversation = await visible_conversation(self._store, message.conversation_id, viewer)
        return conversation, message, await self._store.list_steps(message_id)
