"""What a viewer may reach: a conversation or message of someone else reads as one that does not exist."""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.errors import NotFound

if TYPE_CHECKING:
    from application.ports.conversation_reader import ConversationReader
    from application.ports.message_reader import MessageReader
    from domain.accounts.viewers import Viewer
    from domain.conversations.conversation import Conversation, Message
    from domain.ids import ConversationId, MessageId


async def visible_conversation(
    store: ConversationReader, conversation_id: ConversationId, viewer: Viewer
) -> Conversation:
    conversation = await store.get_conversation(conversation_id, viewer.owner)
    if conversation is None or not viewer.sees(conversation):
        raise NotFound(f"Conversation {conversation_id!r} was not found.")
    return conversation


async def visible_message(store: MessageReader, message_id: MessageId, viewer: Viewer) -> Message:
    message = await store.get_message(message_id, viewer.owner)
    if message is None or not viewer.sees_message(message):
        raise NotFound(f"Message {message_id!r} was not found.")
    return message
