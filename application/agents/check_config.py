"""What a config refers to must exist for its owner: its tools, its datasets, its model profiles
(`model`, and `memory.model` when it names one), the workflow versions it pins.

A draft may be saved while it still refers to something missing (it is work in progress); it
cannot be published so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from domain.workflows.workflow import WorkflowId

if TYPE_CHECKING:
    from application.ports.chat_models import ChatModels
    from application.ports.knowledge_base import KnowledgeBase
    from application.ports.tools import ToolBox
    from application.ports.workflow_store import WorkflowStore
    from domain.agents.config import AgentConfig
    from domain.ids import OwnerId


class ConfigCheck:
    def __init__(
        self, toolbox: ToolBox, knowledge: KnowledgeBase, models: ChatModels, workflows: WorkflowStore | None = None,
    ) -> None:
        self._toolbox = toolbox
        self._workflows = workflows
        self._knowledge = knowledge
        self._models = models

    async def problems(self, config: AgentConfig, owner: OwnerId) -> list[str]:
        """Each reference that does not resolve, named by its field."""
        # A name may be a pattern (`server.*`) or qualified (`server.tool`): each must match a tool.
        problems = [f"tools: no tool named {name!r}" for name in config.tool_names if not self._toolbox.specs([name])]
        for dataset in config.dataset_ids:
            if await self._knowledge.get_dataset(dataset, owner) is None:
                problems.append(f"datasets: no dataset {dataset!r} of yours")
        named = (("model", config.model), ("memory.model", config.memory_model))
        for field, profile in named:
            if profile is not None and self._models.get(profile) is None:
                known = ", ".join(p.name for p in self._models.profiles())
                problems.append(f"{field}: no model profile named {profile!r} (known: {known})")
        return problems + await self._workflows_missing(config, owner)

    async def _workflows_missing(self, config: AgentConfig, owner: OwnerId) -> list[str]:
        problems = []
        for index, ref in enumerate(config.workflows):
            found = None
            if self._workflows is not None:
                found = await self._workflows.version(WorkflowId(ref.id), owner, ref.version)
            if found is None:
                problems.append(f"workflows[{index}]: no version {ref.version} of a workflow {ref.id!r} of yours")
        return problems
