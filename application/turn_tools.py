"""The tools one turn offers: the agent's named tools, plus retrieval over its datasets."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Protocol

from application.ports.embedder import Embedder
from application.ports.knowledge_base import KnowledgeBase
from application.ports.tools import ToolBox, ToolCallFailed
from domain.agent import AgentConfig
from domain.ids import OwnerId
from domain.knowledge import ScoredChunk
from domain.thoughts import ThoughtEvent
from domain.tools import ToolCall, ToolFailure, ToolSpec

RETRIEVAL_TOOL = "dataset_retrieval"
RETRIEVAL_SPEC = ToolSpec(
    name=RETRIEVAL_TOOL,
    description="Search the agent's knowledge base (its datasets) and return the most relevant passages.",
    parameters={
        "type": "object",
        "properties": {"query": {"type": "string", "description": "what to look for"}},
        "required": ["query"],
    },
)


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


class Invokes(Protocol):
    async def invoke(self, call: ToolCall) -> str: ...


class TurnTools:
    def __init__(
        self, toolbox: ToolBox, retrieval: Retrieval | None, config: AgentConfig, owner: OwnerId
    ) -> None:
        self._toolbox = toolbox
        self._retrieval = retrieval if config.dataset_ids else None
        self._config = config
        self._owner = owner
        self.specs: list[ToolSpec] = toolbox.specs(config.tool_names)
        if self._retrieval is not None:
            self.specs.append(RETRIEVAL_SPEC)

    def event_for(self, name: str) -> ThoughtEvent:
        retrieves = self._retrieval is not None and name == RETRIEVAL_TOOL
        return ThoughtEvent.DATASET_RETRIEVAL if retrieves else ThoughtEvent.AGENT_ACTION

    async def invoke(self, call: ToolCall) -> str:
        if self._retrieval is None or call.name != RETRIEVAL_TOOL:
            return await self._toolbox.invoke(call)
        query = call.arguments.get("query")
        if not isinstance(query, str) or not query.strip():
            raise ToolCallFailed(ToolFailure.INVALID_ARGUMENTS, "'query' must be a non-empty string")
        return cite(await self._retrieval.search(self._owner, self._config, query))
