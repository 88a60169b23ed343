"""The recall index's upkeep: a conversation's summary and archive entries embedded for recall
across the user's conversations (a memory upkeep job, after the summary and the fold).

Off the request path and batched: one embedding call for whatever of the conversation has no
vector of the current embedder yet. A failure leaves the items unembedded; the next upkeep of the
conversation catches up. Its reads and writes are three transactions: the conversation read, the
summary kept with the items shared and those to embed read (`RecallIndex.index_conversation`), and
the vectors saved.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from domain.memory.user_facts import RecallScope

if TYPE_CHECKING:
    from application.ports.conversation_reader import ConversationReader
    from application.ports.embedder import Embedder
    from application.ports.memory_record import RecallIndex
    from domain.agents.config import AgentConfig
    from domain.conversations.conversation import Message


class IndexMemory:
    def __init__(self, store: ConversationReader, index: RecallIndex, embedder: Embedder) -> None:
        self._store = store
        self._index = index
        self._embedder = embedder

    async def __call__(self, finished: Message, config: AgentConfig) -> int:
        """Index the conversation's summary, share its items as the agent's config says, and embed
        what has no vector; how many were embedded."""
        conversation = await self._store.get_conversation(finished.conversation_id, finished.owner)
        if conversation is None:  # deleted meanwhile
            return 0
        # A debugger conversation is the builder's own, never recalled in the published agent's.
        scope = RecallScope.NONE if conversation.is_debug else config.recall_scope
        items = await self._index.index_conversation(conversation, [finished.id], scope, self._embedder.name)
        if not items:
            return 0
        vectors = await self._embedder.embed([item.text for item in items])
        await self._index.save_vectors(self._embedder.name, {i.id: v for i, v in zip(items, vectors, strict=True)})
        return len(items)
