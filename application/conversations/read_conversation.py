"""ReadConversation: one conversation as the list shows it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.conversations.visibility import visible_conversation
from application.ports.conversation_reader import ConversationListing

if TYPE_CHECKING:
    from application.ports.conversation_reader import ConversationReader
    from domain.accounts.viewers import Viewer
    from domain.ids import ConversationId


class ReadConversation:
    def __init__(self, store: ConversationReader) -> None:
        self._store = store

    async def __call__(self, conversation_id: ConversationId, viewer: Viewer) -> ConversationListing:
        conversation = await visible_conversation(self._store, conversation_id, viewer)
        return ConversationListing(conversation, await self._store.latest_message(conversation_id))
