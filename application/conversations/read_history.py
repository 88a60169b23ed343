"""Queries over the record: a conversation's messages and a message's steps."""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.errors import InvalidInput, NotFound

if TYPE_CHECKING:
    from application.ports.message_store import MessageStore
    from domain.conversation import Conversation, Message, MessageAgentThought
    from domain.ids import ConversationId, MessageId, OwnerId

MAX_PAGE = 100


class ReadHistory:
    def __init__(self, store: MessageStore) -> None:
        self._store = store

    async def messages(
        self, conversation_id: ConversationId, owner: OwnerId, offset: int, limit: int
    ) -> tuple[Conversation, list[Message]]:
        """The conversation (its agent) and a page of its messages, oldest first."""
        if offset < 0 or not 1 <= limit <= MAX_PAGE:
            raise InvalidInput(f"offset must be >= 0 and limit within 1..{MAX_PAGE}.")
        conversation = await self._store.get_conversation(conversation_id, owner)
        if conversation is None:
            raise NotFound(f"Conversation {conversation_id!r} was not found.")
        return conversation, await self._store.list_messages(conversation_id, offset, limit)

    async def steps(
        self, message_id: MessageId, owner: OwnerId
    ) -> tuple[Conversation, Message, list[MessageAgentThought]]:
        """The message with its conversation (its agent), and the message's steps by position."""
        message = await self._store.get_message(message_id, owner)
        conversation = None if message is None else await self._store.get_conversation(message.conversation_id, owner)
        if message is None or conversation is None:
            raise NotFound(f"Message {message_id!r} was not found.")
        return conversation, message, await self._store.list_steps(message_id)
