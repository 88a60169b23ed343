"""`iteration`: `items`, an expression giving a list, and `body`, a graph run once per item with
`item` and `index` in scope (and as its start node's outputs) → `<id>.outputs`, the list of the
body's end outputs, in the items' order.

At most `parallelism` items (default 4) run at once. The first item whose body fails fails the
node, and the items still running are cancelled.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from application.errors import NodeFailed
from application.workflows.node_work import NodeResult
from domain.workflows.graph import Graph
from domain.workflows.runs import Spent

if TYPE_CHECKING:
    from collections.abc import Mapping

    from application.ports.templates import Templates
    from application.workflows.node_work import GraphOutcome, RunContext
    from domain.workflows.graph import Node

DEFAULT_PARALLELISM = 4


class IterationWork:
    def __init__(self, templates: Templates, parallelism: int = DEFAULT_PARALLELISM) -> None:
        self._templates = templates
        self._parallelism = parallelism

    async def __call__(self, node: Node, scope: Mapping[str, Any], context: RunContext) -> NodeResult:
        items = await self._templates.evaluate(node.config["items"], scope)
        if not isinstance(items, list | tuple):
            raise NodeFailed(f"The iteration's items are a {type(items).__name__}, not a list.")
        body = node.config.get("body")
        if not isinstance(body, Graph):
            raise NodeFailed("The iteration has no body graph.")
        room = asyncio.Semaphore(int(node.config.get("parallelism") or self._parallelism))

        async def one(index: int, item: Any) -> GraphOutcome:
            async with room:
                inputs = {"item": item, "index": index}
                outcome = await context.graphs.run(body, inputs, context, {**scope, **inputs})
            if outcome.error is not None:
                raise NodeFailed(f"item {index}: {outcome.error}")
            return outcome

        tasks = [asyncio.create_task(one(index, item)) for index, item in enumerate(items)]
        try:
            outcomes = await asyncio.gather(*tasks)
        finally:  # after the first failure, or when the run stops: the items still running end too
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        spent = sum((o.spent for o in outcomes), Spent())
        return NodeResult({"outputs": [dict(o.outputs) for o in outcomes]}, inputs={"items": list(items)},
                          spent=spent)
