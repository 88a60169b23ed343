"""`code`: `def main(**inputs) -> dict` in the sandbox, with `inputs: {name: expression}`; each key
of the dict it returns is an output (`<id>.<key>`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from application.ports.code_sandbox import CodeLimits
from application.workflows.node_work import NodeResult

if TYPE_CHECKING:
    from collections.abc import Mapping

    from application.ports.code_sandbox import CodeSandbox
    from application.ports.templates import Templates
    from application.workflows.node_work import RunContext
    from domain.workflows.graph import Node


class CodeWork:
    def __init__(self, sandbox: CodeSandbox, templates: Templates, limits: CodeLimits | None = None) -> None:
        self._sandbox = sandbox
        self._templates = templates
        self._limits = limits or CodeLimits()

    async def __call__(self, node: Node, scope: Mapping[str, Any], context: RunContext) -> NodeResult:
        evaluate = self._templates.evaluate
        inputs = {name: await evaluate(expression, scope) for name, expression in node.config.get("inputs", {}).items()}
        outputs = await self._sandbox.run(node.config["code"], inputs, self._limits)
        return NodeResult(outputs, inputs=inputs)
