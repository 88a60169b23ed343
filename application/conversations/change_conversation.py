"""ChangeConversation: rename or pin a conversation; a title set here wins over auto-titling."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Protocol

from application.conversations.visibility import visible_conversation
from application.errors import InvalidInput, NotFound
from application.ports.conversation_reader import ConversationListing, ConversationReader
from application.ports.conversation_writer import ConversationWriter
from domain.errors import DomainError

if TYPE_CHECKING:
    from application.ports.runtime import Clock
    from domain.accounts.viewers import Viewer
    from domain.ids import ConversationId


class _Store(ConversationReader, ConversationWriter, Protocol):
    """The record the conversation is read from and saved to."""


class ChangeConversation:
    def __init__(self, store: _Store, clock: Clock) -> None:
        self._store = store
        self._clock = clock

    async def __call__(
        self, conversation_id: ConversationId, viewer: Viewer, title: str | None, pinned: bool | None
    ) -> ConversationListing:
        conversation = await visible_conversation(self._store, conversation_id, viewer)
        now = self._clock.now()
        try:
            changed = conversation.renamed(title, now) if title is not None else conversation
        except DomainError as bad:
            raise InvalidInput(f"{bad}.") from bad
        if pinned is not None:
            changed = replace(changed, pinned=pinned, updated_at=now)
        saved = await self._store.update_conversation(changed, title=title is not None, pinned=pinned is not None)
        fresh = await self._store.get_conversation(conversation_id, viewer.owner) if saved else None
        if fresh is None:
            raise NotFound(f"Conversation {conversation_id!r} was not found.")
        return ConversationListing(fresh, await self._store.latest_message(conversation_id))
