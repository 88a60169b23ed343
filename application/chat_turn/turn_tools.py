"""The tools one turn offers: the agent's named tools, plus retrieval over its datasets."""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.errors import ToolCallFailed
from application.knowledge.retrieval import Retrieval, cite
from domain.conversations.thoughts import ThoughtEvent
from domain.tools.calls import ToolCall, ToolFailure, ToolSpec
from domain.tools.client_tools import ChoiceMode

if TYPE_CHECKING:
    from application.chat_turn.client_tool_relay import ClientToolRelay
    from application.ports.tools import ToolBox
    from domain.agents.config import AgentConfig
    from domain.ids import OwnerId
    from domain.tools.client_tools import ToolChoice

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
    """`client`: the request's own tools, run by its client (domain.tools.client_tools); one named as an
    agent's tool is the client's, which asked for it by that name."""

    def __init__(
        self, toolbox: ToolBox, retrieval: Retrieval, config: AgentConfig, owner: OwnerId,
        client: ClientToolRelay | None = None,
    ) -> None:
        self._toolbox = toolbox
        self._retrieval = retrieval if config.dataset_ids else None
        self._config = config
        self._owner = owner
        self.client = client
        self._client_names = client.tools.names if client is not None else frozenset()
        self.specs: list[ToolSpec] = [s for s in toolbox.specs(config.tool_names) if s.name not in self._client_names]
        if self._retrieval is not None and RETRIEVAL_TOOL not in self._client_names:
            self.specs.append(RETRIEVAL_SPEC)
        if client is not None:
            self.specs += client.tools.specs

    def offered(self, choice: ToolChoice) -> list[ToolSpec]:
        """The tools a model call offers under the client's `choice` (`none` withholds the client's)."""
        if choice.mode is not ChoiceMode.NONE:
            return self.specs
        return [s for s in self.specs if s.name not in self._client_names]

    def is_client(self, name: str) -> bool:
        return name in self._client_names

    @property
    def names(self) -> frozenset[str]:
        """The names of the offered tools."""
        return frozenset(s.name for s in self.specs)

    @property
    def sequential(self) -> frozenset[str]:
        """The names of the offered tools whose calls must not overlap."""
        return frozenset(s.name for s in self.specs if s.sequential)

    def event_for(self, name: str) -> ThoughtEvent:
        retrieves = self._retrieval is not None and name == RETRIEVAL_TOOL and not self.is_client(name)
        return ThoughtEvent.DATASET_RETRIEVAL if retrieves else ThoughtEvent.AGENT_ACTION

    async def invoke(self, call: ToolCall) -> str:
        if self._retrieval is None or call.name != RETRIEVAL_TOOL:
            return await self._toolbox.invoke(call)
        query = call.arguments.get("query")
        if not isinstance(query, str) or not query.strip():
            raise ToolCallFailed(ToolFailure.INVALID_ARGUMENTS, "'query' must be a non-empty string")
        return cite(await self._retrieval.search(self._owner, self._config, query))
