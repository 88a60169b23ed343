"""The recall index's upkeep: a conversation's summary and archive entries embedded for recall
across the user's conversations (a memory upkeep job, after the summary and the fold).

Off the request path and batched: one embedding call for whatever of the conversation has no
vector of the current embedder yet. A failure leaves the items unembedded; the next upkeep of the
conversation catches up. Its reads and writes are two transactions after a digest: the summary
kept with the items shared and those to embed read (`RecallIndex.index_conversation`), and the
vectors saved. The conversation comes from the digest that just read and saved it in the same
upkeep, under the same lock; read here only when that digest read none or failed. A new summary
of an upkeep that folded no turns (`fresh_summary`: the common upkeep) is embedded first, in that
one call, and kept with its vector: one transaction (a second call and the vectors saved only for
entries an earlier upkeep failed to embed).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from domain.memory.user_facts import RecallScope

if TYPE_CHECKING:
    from application.ports.conversation_reader import ConversationReader
    from application.ports.embedder import Embedder
    from application.ports.memory_record import RecallIndex
    from domain.agents.config import AgentConfig
    from domain.conversations.conversation import Conversation, Message


class IndexMemory:
    def __init__(self, store: ConversationReader, index: RecallIndex, embedder: Embedder) -> None:
        self._store = store
        self._index = index
        self._embedder = embedder

    async def __call__(
        self, finished: Message, config: AgentConfig, conversation: Conversation | None = None,
        fresh_summary: bool = False,
    ) -> int:
        """Index the conversation's summary, share its items as the agent's config says, and embed
        what has no vector; how many were embedded. `conversation`: as stored, when known;
        `fresh_summary`: its summary is new and no archive entry is, so it is embedded first, alone."""
        if conversation is None:
            conversation = await self._store.get_conversation(finished.conversation_id, finished.owner)
        if conversation is None:  # deleted meanwhile
            return 0
        # A debugger conversation is the builder's own, never recalled in the published agent's.
        scope = RecallScope.NONE if conversation.is_debug else config.recall_scope
        vector = await self._summary_vector(conversation.summary) if fresh_summary else None
        items = await self._index.index_conversation(conversation, [finished.id], scope, self._embedder.name, vector)
        first = int(vector is not None)
        if not items:
            return first
        vectors = await self._embedder.embed([item.text for item in items])
        await self._index.save_vectors(self._embedder.name, {i.id: v for i, v in zip(items, vectors, strict=True)})
        return first + len(items)

    async def _summary_vector(self, summary: str) -> list[float] | None:
        """The new summary's vector, None when there is no summary or the embedder failed: then the
        summary is kept unembedded, and embedded (or its failure reported) with the items below."""
        if not summary.strip():
            return None
        try:
            return (await self._embedder.embed([summary]))[0]
        except Exception:  # whatever it was, the embedding below asks again and reports it
            return None
