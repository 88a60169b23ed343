"""The nodes that only read the scope: `template`, `if_else` and `end`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from application.workflows.node_work import NodeResult, resolve_all
from domain.workflows.graph import ELSE_BRANCH

if TYPE_CHECKING:
    from collections.abc import Mapping

    from application.ports.templates import Templates
    from application.workflows.node_work import RunContext
    from domain.workflows.graph import Node


class TemplateWork:
    """`template` → `<id>.output`, its text."""

    def __init__(self, templates: Templates) -> None:
        self._templates = templates

    async def __call__(self, node: Node, scope: Mapping[str, Any], context: RunContext) -> NodeResult:
        return NodeResult({"output": await self._templates.render(node.config["template"], scope)})


class IfElseWork:
    """`cases: [{id, when}]`, tried in order: the first whose condition holds is the branch taken,
    `else` when none does (`<id>.branch`)."""

    def __init__(self, templates: Templates) -> None:
        self._templates = templates

    async def __call__(self, node: Node, scope: Mapping[str, Any], context: RunContext) -> NodeResult:
        for case in node.config.get("cases", ()):
            if await self._templates.evaluate(case["when"], scope):
                return NodeResult({"branch": case["id"]}, branch=case["id"])
        return NodeResult({"branch": ELSE_BRANCH}, branch=ELSE_BRANCH)


class EndWork:
    """`outputs: {name: template}` → the run's outputs."""

    def __init__(self, templates: Templates) -> None:
        self._templates = templates

    async def __call__(self, node: Node, scope: Mapping[str, Any], context: RunContext) -> NodeResult:
        return NodeResult(await resolve_all(self._templates, node.config.get("outputs", {}), scope))
