"""The tools one turn offers: the agent's named tools, plus retrieval over its datasets."""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.errors import ToolCallFailed
from application.knowledge.retrieval import Retrieval, cite
from domain.thoughts import ThoughtEvent
from domain.tools import ToolCall, ToolFailure, ToolSpec

if TYPE_CHECKING:
    from application.ports.tools import ToolBox
    from domain.agent import AgentConfig
    from domain.ids import OwnerId

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


class TurnTools:
    def __init__(
        self, toolbox: ToolBox, retrieval: Retrieval, config: AgentConfig, owner: OwnerId
    ) -> None:
        self._toolbox = toolbox
        self._retrieval = retrieval if config.dataset_ids else None
        self._config = config
        self._owner = owner
        self.specs: list[ToolSpec] = toolbox.specs(config.tool_names)
        if self._retrieval is not None:
            self.specs.append(RETRIEVAL_SPEC)

    @property
    def names(self) -> frozenset[str]:
        """The names of the offered tools."""
        return frozenset(s.name for s in self.specs)

    @property
    def sequential(self) -> frozenset[str]:
        """The names of the offered tools whose calls must not overlap."""
        return frozenset(s.name for s in self.specs if s.sequential)

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
