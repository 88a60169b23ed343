"""The tools one turn offers: the agent's named tools, retrieval over its datasets, and its workflows
(application/chat_turn/turn_workflows.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.errors import ToolCallFailed
from application.knowledge.retrieval import Retrieval, cite
from domain.conversations.thoughts import ThoughtEvent
from domain.tools.calls import ToolCall, ToolFailure, ToolSpec
from domain.tools.client_tools import ChoiceMode

if TYPE_CHECKING:
    from application.chat_turn.client_tool_relay import ClientToolRelay
    from application.chat_turn.turn_workflows import TurnWorkflows
    from application.ports.tools import ToolBox
    from domain.agents.config import AgentConfig
    from domain.ids import OwnerId, ThoughtId
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
        client: ClientToolRelay | None = None, workflows: TurnWorkflows | None = None,
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
        self._workflows = workflows
        self.step_id: ThoughtId | None = None  # the step whose calls run now (set by ToolRound): a workflow's parent
        # The names offered, kept up to date as the workflows load: the executor counts calls under these.
        self.known: set[str] = {s.name for s in self.specs}

    async def load(self) -> None:
        """Add the agent's workflows, which the store holds, before the loop's first model call."""
        if self._workflows is not None and self._config.workflows:
            self.specs += await self._workflows.load(self.names)
            self.known.update(self.names)

    @property
    def unbounded(self) -> set[str]:
        """The tools that bound their own time (a workflow run has its timeout), kept up to date."""
        return self._workflows.names if self._workflows is not None else set()

    @property
    def direct_answer(self) -> str | None:
        """The outputs of a `return_direct` workflow that ran: the turn's answer."""
        return self._workflows.direct_answer if self._workflows is not None else None

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
        if self._workflows is not None and call.name in self._workflows.names and not self.is_client(call.name):
            if self.step_id is None:
                raise AssertionError("a workflow tool runs inside a step")
            return await self._workflows.invoke(call, self.step_id)
        if self._retrieval is None or call.name != RETRIEVAL_TOOL:
            return await self._toolbox.invoke(call)
        query = call.arguments.get("query")
        if not isinstance(query, str) or not query.strip():
            raise ToolCallFailed(ToolFailure.INVALID_ARGUMENTS, "'query' must be a non-empty string")
        return cite(await self._retrieval.search(self._owner, self._config, query))
