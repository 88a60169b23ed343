"""`tool`: any tool an agent can have, called with `arguments: {name: template}` → `<id>.result`,
the tool's output: a built-in or a `server.tool` over MCP through the tool box, as in a turn; and
`dataset_retrieval`, which searches the node's `datasets` of the run's account for `query`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from application.errors import NodeFailed
from application.knowledge.retrieval import cite
from application.workflows.node_work import NodeResult, resolve_all
from domain.tools.calls import ToolCall

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from application.ports.embedder import Embedder
    from application.ports.knowledge_base import KnowledgeBase
    from application.ports.runtime import IdGenerator
    from application.ports.templates import Templates
    from application.ports.tools import Invokes
    from application.workflows.node_work import RunContext
    from domain.ids import OwnerId
    from domain.workflows.graph import Node

DATASET_RETRIEVAL = "dataset_retrieval"
TOP_K = 3  # passages, as an agent's retrieval gives by default (AgentConfig.retrieval_top_k)


class DatasetSearch:
    """The passages of an account's datasets nearest to a query, cited as a turn's retrieval cites them."""

    def __init__(self, knowledge: KnowledgeBase, embedder: Embedder) -> None:
        self._knowledge = knowledge
        self._embedder = embedder

    async def __call__(self, owner: OwnerId, datasets: Sequence[str], query: str, top_k: int) -> str:
        [vector] = await self._embedder.embed([query])
        return cite(await self._knowledge.search(owner, datasets, vector, top_k, 0.0))


class ToolWork:
    """A failed call raises `ToolCallFailed` as in a turn: the node's `retry` and `on_error` decide."""

    def __init__(self, tools: Invokes, templates: Templates, ids: IdGenerator, datasets: DatasetSearch) -> None:
        self._tools = tools
        self._templates = templates
        self._ids = ids
        self._datasets = datasets

    async def __call__(self, node: Node, scope: Mapping[str, Any], context: RunContext) -> NodeResult:
        name = node.config["tool"]
        arguments = await resolve_all(self._templates, node.config.get("arguments", {}), scope)
        inputs = {"tool": name, "arguments": arguments}
        if name == DATASET_RETRIEVAL:
            return NodeResult({"result": await self._search(node, arguments, context)}, inputs=inputs)
        result = await self._tools.invoke(ToolCall(self._ids.new_id(), name, arguments))
        return NodeResult({"result": result}, inputs=inputs)

    async def _search(self, node: Node, arguments: Mapping[str, Any], context: RunContext) -> str:
        query, top_k = arguments.get("query"), arguments.get("top_k", TOP_K)
        if not isinstance(query, str) or not query.strip():
            raise NodeFailed("dataset_retrieval needs a non-empty `query` argument.")
        if not isinstance(top_k, int) or isinstance(top_k, bool) or top_k < 1:
            raise NodeFailed("dataset_retrieval's `top_k` is a whole number of at least 1.")
        return await self._datasets(context.owner, node.config["datasets"], query, top_k)
