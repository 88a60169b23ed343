"""RegenerateAnswer: answer a conversation's latest query again, as a new sibling message.

The old answer is kept (and listed); once the new one completes, the store marks the old one
superseded, so the short-term window and the summary hold the newest sibling only. Only the
latest message can be answered again: branching a conversation is out of scope.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from application.chat_turn.turn import ChatRequest
from application.errors import Conflict, NotFound
from application.ports.conversation_reader import ConversationReader
from application.ports.message_reader import MessageReader
from domain.conversations.conversation import EntryPoint, MessageStatus

if TYPE_CHECKING:
    from application.chat_turn.start_chat_turn import StartChatTurn
    from application.chat_turn.turn import TurnHandle
    from domain.accounts.viewers import Viewer
    from domain.conversations.conversation import Message
    from domain.ids import MessageId

class _Store(MessageReader, ConversationReader, Protocol):
    """The record the answer to regenerate, its siblings and its conversation's latest message are read from."""


MAX_SIBLINGS = 100  # answers of one query walked back at most


class RegenerateAnswer:
    def __init__(self, store: _Store, start: StartChatTurn) -> None:
        self._store = store
        self._start = start

    async def __call__(self, message_id: MessageId, viewer: Viewer, key_id: str | None = None) -> TurnHandle:
        """`key_id`: the caller's API key, whose rate limits count the new turn."""
        old = await self._store.get_message(message_id, viewer.owner)
        if old is None or not viewer.sees_message(old):
            raise NotFound(f"Message {message_id!r} was not found.")
        if old.status is MessageStatus.RUNNING:
            raise Conflict(f"Message {message_id!r} is still running: stop it first, or wait for its answer.")
        latest = await self._store.latest_message(old.conversation_id)
        if latest is None or latest.id != old.id:
            raise Conflict(
                f"Message {message_id!r} is not the conversation's latest: only the latest answer can be "
                "regenerated (branching a conversation is out of scope)."
            )
        # The store checks "latest, nothing running" again as it opens the turn, atomically.
        return await self._start(ChatRequest(
            owner=viewer.owner, query=old.query, conversation_id=old.conversation_id, image_urls=old.image_urls,
            entry=EntryPoint(old.entry_point), end_user=viewer.end_user, key_agent=viewer.agent_id,
            parent_message_id=old.id, replaces=await self._siblings(old), key_id=key_id,
        ))

    async def _siblings(self, old: Message) -> tuple[MessageId, ...]:
        """`old` and the earlier answers it answered again: none of them is history for the new one."""
        chain = [old.id]
        parent = old.parent_message_id
        while parent is not None and len(chain) < MAX_SIBLINGS:
            chain.append(parent)
            found = await self._store.get_message(parent, old.owner)
            parent = found.parent_message_id if found is not None else None
        return tuple(chain)
