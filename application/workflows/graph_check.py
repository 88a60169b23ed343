"""A workflow graph checked as the editor saves it (its shape, its templates), and again as it is
published (what it refers to must then exist for its owner: tools, datasets, model profiles).

A `code` node's Python is compiled as it is saved too: code the sandbox would never run (a syntax
error, a forbidden name, no `def main`) is a problem at its path, not a failure at run time.

A draft may refer to something missing (it is work in progress); it cannot be published so. Every
problem comes back at once, as `InvalidWorkflow` (422 `invalid_workflow`), named by its path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from application.errors import InvalidWorkflow
from domain.workflows.graph import Graph, NodeType
from domain.workflows.node_fields import DATASET_RETRIEVAL
from domain.workflows.problems import Problem, WorkflowInvalid
from domain.workflows.validation import parse_graph

if TYPE_CHECKING:
    from application.ports.chat_models import ChatModels
    from application.ports.code_sandbox import CodeSandbox
    from application.ports.knowledge_base import KnowledgeBase
    from application.ports.templates import Templates
    from application.ports.tools import ToolBox
    from domain.ids import OwnerId


class GraphCheck:
    def __init__(
        self, templates: Templates, sandbox: CodeSandbox, toolbox: ToolBox, knowledge: KnowledgeBase,
        models: ChatModels,
    ) -> None:
        self._templates = templates
        self._sandbox = sandbox
        self._toolbox = toolbox
        self._knowledge = knowledge
        self._models = models

    def parsed(self, raw: Any) -> Graph:
        """The graph, or `InvalidWorkflow` naming every problem of its shape and templates, else of its code."""
        try:
            graph = parse_graph(raw, self._templates.names, self._templates.problem)
        except WorkflowInvalid as invalid:
            raise InvalidWorkflow(str(invalid), invalid.problems) from invalid
        if problems := self._code_problems(graph, ""):
            code_invalid = WorkflowInvalid(problems)
            raise InvalidWorkflow(str(code_invalid), code_invalid.problems)
        return graph

    def _code_problems(self, graph: Graph, path: str) -> list[Problem]:
        problems: list[Problem] = []
        for index, node in enumerate(graph.nodes):
            at = f"{path}nodes[{index}]"
            if node.type is NodeType.CODE and (problem := self._sandbox.problem(node.config["code"])) is not None:
                problems.append(Problem(f"{at}.code", problem))
            elif node.type is NodeType.ITERATION:
                problems += self._code_problems(node.config["body"], f"{at}.body.")
        return problems

    async def publishable(self, raw: Any, owner: OwnerId) -> Graph:
        """The graph, if it is valid and everything it refers to exists for `owner`."""
        graph = self.parsed(raw)
        problems = await self._missing(graph, owner, "")
        if problems:
            listed = "; ".join(str(p) for p in problems)
            raise InvalidWorkflow(f"The workflow cannot be published: {listed}.", tuple(problems))
        return graph

    async def _missing(self, graph: Graph, owner: OwnerId, path: str) -> list[Problem]:
        """Each tool, dataset and model profile a node names that does not exist, bodies included."""
        problems: list[Problem] = []
        for index, node in enumerate(graph.nodes):
            at = f"{path}nodes[{index}]"
            if node.type is NodeType.TOOL:
                problems += await self._tool_missing(node.config, owner, at)
            elif node.type is NodeType.LLM and node.config.get("model") is not None:
                if self._models.get(node.config["model"]) is None:
                    known = ", ".join(p.name for p in self._models.profiles())
                    problems.append(Problem(f"{at}.model", f"no model profile named {node.config['model']!r} "
                                                           f"(known: {known})"))
            elif node.type is NodeType.ITERATION:
                problems += await self._missing(node.config["body"], owner, f"{at}.body.")
        return problems

    async def _tool_missing(self, config: Any, owner: OwnerId, at: str) -> list[Problem]:
        if config["tool"] != DATASET_RETRIEVAL:
            return [] if self._toolbox.specs([config["tool"]]) else [Problem(f"{at}.tool", f"no tool named "
                                                                                         f"{config['tool']!r}")]
        return [Problem(f"{at}.datasets[{index}]", f"no dataset {dataset!r} of yours")
                for index, dataset in enumerate(config["datasets"])
                if await self._knowledge.get_dataset(dataset, owner) is None]
