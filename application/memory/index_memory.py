"""The recall index's upkeep: a conversation's summary and archive entries embedded for recall
across the user's conversations (a memory upkeep job, after the summary and the fold).

Off the request path and batched: one embedding call for whatever of the conversation has no
vector of the current embedder yet. A failure leaves the items unembedded; the next upkeep of the
conversation catches up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from application.ports.embedder import Embedder
    from application.ports.memory_record import RecallIndex
    from application.ports.message_store import MessageStore
    from domain.conversation import Message


class IndexMemory:
    def __init__(self, store: MessageStore, index: RecallIndex, embedder: Embedder) -> None:
        self._store = store
        self._index = index
        self._embedder = embedder

    async def __call__(self, finished: Message) -> int:
        """Index the conversation's summary and embed what has no vector; how many were embedded."""
        conversation = await self._store.get_conversation(finished.conversation_id, finished.owner)
        if conversation is None:  # deleted meanwhile
            return 0
        await self._index.index_summary(conversation, [finished.id])
        items = await self._index.unembedded(conversation.id, self._embedder.name)
        if not items:
            return 0
        vectors = await self._embedder.embed([item.text for item in items])
        await self._index.save_vectors(self._embedder.name, {i.id: v for i, v in zip(items, vectors, strict=True)})
        return len(items)
