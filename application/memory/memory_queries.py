"""Read-only queries over a conversation's memory, for tools (memagent's MCP server).

`recall`: the rolling summary and the short-term window (the last completed turns).
`search`: the conversation's completed turns ranked by similarity to a query, with the
configured Embedder (the lexical one by default: words in common). Owner only: someone
else's conversation is "not found", exactly like one that does not exist.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from application.errors import InvalidInput, NotFound
from application.ports.conversation_reader import ConversationReader
from application.ports.message_reader import MessageReader
from domain.knowledge.datasets import cosine

if TYPE_CHECKING:
    from application.ports.embedder import Embedder
    from domain.conversations.conversation import Conversation, Message
    from domain.ids import ConversationId, OwnerId

class _Store(ConversationReader, MessageReader, Protocol):
    """The record the conversation and its recent turns are read from."""


MAX_QUERY = 2000
MAX_TOP_K = 50


@dataclass(frozen=True, slots=True)
class MemorySnapshot:
    conversation: Conversation
    window: tuple[Message, ...]  # completed turns, oldest first


@dataclass(frozen=True, slots=True)
class MemoryHit:
    message: Message
    score: float


class MemoryQueries:
    def __init__(
        self, store: _Store, embedder: Embedder, window_turns: int = 10, searched_turns: int = 1000
    ) -> None:
        self._store = store
        self._embedder = embedder
        self._window_turns = window_turns
        self._searched_turns = searched_turns

    async def recall(self, owner: OwnerId, conversation_id: ConversationId) -> MemorySnapshot:
        conversation = await self._owned(owner, conversation_id)
        window = await self._store.recent_messages(conversation_id, self._window_turns)
        return MemorySnapshot(conversation, tuple(window))

    async def search(
        self, owner: OwnerId, conversation_id: ConversationId, query: str, top_k: int = 5
    ) -> list[MemoryHit]:
        """The `top_k` completed turns most similar to `query` (of the last `searched_turns`), best first."""
        if not query.strip() or len(query) > MAX_QUERY:
            raise InvalidInput(f"The query must be 1 to {MAX_QUERY} characters.")
        if not 1 <= top_k <= MAX_TOP_K:
            raise InvalidInput(f"top_k must be within 1..{MAX_TOP_K}.")
        await self._owned(owner, conversation_id)
        turns = await self._store.recent_messages(conversation_id, self._searched_turns)
        if not turns:
            return []
        vectors = await self._embedder.embed([query, *(f"{m.query}\n{m.answer}" for m in turns)])
        wanted, *texts = vectors
        hits = [MemoryHit(m, cosine(wanted, v)) for m, v in zip(turns, texts, strict=True)]
        hits = [h for h in hits if h.score > 0.0]
        hits.sort(key=lambda h: (-h.score, h.message.created_at))
        return hits[:top_k]

    async def _owned(self, owner: OwnerId, conversation_id: ConversationId) -> Conversation:
        conversation = await self._store.get_conversation(conversation_id, owner)
        if conversation is None:
            raise NotFound(f"Conversation {conversation_id!r} was not found.")
        return conversation
