"""RateMessage: an end user's (or the account's) like or dislike of an answer, with a note."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from application.conversations.visibility import visible_message
from application.errors import Conflict, InvalidInput, NotFound
from application.ports.message_annotations import MessageAnnotations
from application.ports.message_reader import MessageReader
from domain.conversations.conversation import MessageStatus
from domain.errors import DomainError

if TYPE_CHECKING:
    from domain.accounts.viewers import Viewer
    from domain.conversations.conversation import Message, Rating
    from domain.ids import MessageId


class _Store(MessageReader, MessageAnnotations, Protocol):
    """The record the message is read from and its rating saved to."""


class RateMessage:
    def __init__(self, store: _Store) -> None:
        self._store = store

    async def __call__(self, message_id: MessageId, viewer: Viewer, rating: Rating | None, note: str) -> Message:
        """The message with its new rating; rating again replaces it, None clears it."""
        message = await visible_message(self._store, message_id, viewer)
        if message.status is MessageStatus.RUNNING:
            raise Conflict(f"Message {message_id!r} is still running: rate its answer once it has one.")
        try:
            rated = message.rated(rating, note)
        except DomainError as bad:
            raise InvalidInput(f"{bad}.") from bad
        if not await self._store.save_feedback(rated):
            raise NotFound(f"Message {message_id!r} was not found.")
        return rated
