"""Knowledge retrieval as a turn uses it: the nearest chunks of the agent's datasets, cited."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

    from application.ports.embedder import Embedder
    from application.ports.knowledge_base import KnowledgeBase
    from domain.agents.config import AgentConfig
    from domain.ids import OwnerId
    from domain.knowledge.datasets import ScoredChunk


class Retrieval:
    """Knowledge-base search as a turn sees it: embed the query, find the nearest chunks."""

    def __init__(self, knowledge: KnowledgeBase, embedder: Embedder) -> None:
        self._knowledge = knowledge
        self._embedder = embedder

    async def search(self, owner: OwnerId, config: AgentConfig, query: str) -> list[ScoredChunk]:
        [vector] = await self._embedder.embed([query])
        return await self._knowledge.search(
            owner, config.dataset_ids, vector, config.retrieval_top_k, config.retrieval_min_score
        )


def cite(found: Sequence[ScoredChunk]) -> str:
    """The observation a model gets: each passage with where it comes from and its score."""
    return json.dumps(
        [
            {"document": s.chunk.document_name, "chunk": s.chunk.position, "score": round(s.score, 4),
             "text": s.chunk.text}
            for s in found
        ],
        ensure_ascii=False,
    )
