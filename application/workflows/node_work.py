"""What the scheduler asks of a node type: run one node once, with the outputs of the nodes before it.

Each node type's work is a callable (application/workflows/nodes/); the scheduler around it starts
it, tries it again (`retry`), decides what its failure means (`on_error`) and records it. The work
itself only does the node's own job and raises when it fails (`NodeFailed`, or the error of the port
it called).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

from domain.workflows.runs import Spent

if TYPE_CHECKING:
    from collections.abc import Mapping

    from application.ports.templates import Templates
    from domain.ids import EndUserId, OwnerId
    from domain.workflows.graph import Graph, Node

# A template that is one expression and nothing else keeps its value's type (`{{ l1.json }}` is an
# object, `{{ start.n }}` a number): a tool's argument or an end output is not always text.
_ONE_EXPRESSION = re.compile(r"\{\{((?:(?!\{\{|\}\}).)*)\}\}", re.DOTALL)


@dataclass(frozen=True, slots=True)
class NodeResult:
    """`inputs`: what the node resolved (a rendered prompt, a request), for the trace; `branch`: the
    edge label an `if_else` chose (None: the node's plain edges)."""

    outputs: Mapping[str, Any]
    inputs: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    branch: str | None = None
    spent: Spent = field(default_factory=Spent)


@dataclass(frozen=True, slots=True)
class GraphOutcome:
    """A graph's run: the end nodes' outputs, or the error that failed it."""

    outputs: Mapping[str, Any]
    spent: Spent
    error: str | None = None


class RunsGraphs(Protocol):
    async def run(
        self, graph: Graph, inputs: Mapping[str, Any], context: RunContext, scope: Mapping[str, Any] | None = None,
    ) -> GraphOutcome:
        """The graph run once: its start node's outputs are `inputs`, and its templates also see
        `scope` (an iteration body sees the nodes outside it)."""
        ...


@dataclass(frozen=True, slots=True)
class RunContext:
    """What a node may need of the run it is part of. `depth`: 1 for a run nobody's workflow
    started; `model`: the calling agent's model profile, the default of `llm` nodes."""

    run_id: str
    owner: OwnerId
    end_user: EndUserId
    depth: int
    graphs: RunsGraphs
    model: str | None = None


class NodeWork(Protocol):
    async def __call__(self, node: Node, scope: Mapping[str, Any], context: RunContext) -> NodeResult:
        """The node's work, done once. Raises when it failed."""
        ...


async def resolve(templates: Templates, template: Any, scope: Mapping[str, Any]) -> Any:
    """A config value's value: a template that is one `{{ expression }}` gives the expression's value,
    any other text its rendering; what is not text (a number in the JSON) stays as it is."""
    if not isinstance(template, str):
        return template
    whole = _ONE_EXPRESSION.fullmatch(template.strip())
    if whole is not None:
        return await templates.evaluate(whole.group(1), scope)
    return await templates.render(template, scope)


async def resolve_all(templates: Templates, templates_by_name: Mapping[str, Any], scope: Mapping[str, Any]) -> dict[
    str, Any]:
    return {name: await resolve(templates, value, scope) for name, value in templates_by_name.items()}
