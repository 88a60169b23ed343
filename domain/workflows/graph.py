"""A workflow's graph: nodes of a few types joined by edges, run as a DAG (docs/workflows.md).

The JSON shape is `{"nodes": [{"id", "type", …}], "edges": [{"source", "target", "branch"?}]}`.
A node's own fields (a prompt, a URL, cases…) stay in `Node.config` as the JSON gave them: each node
type reads its own, and `domain/workflows/validation.py` checks them, naming every problem by path.
`retry` and `on_error` are common to the nodes that do work outside the process (`llm`, `tool`,
`http_request`, `code`).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping

NODE_ID = r"[A-Za-z][A-Za-z0-9_]{0,63}"  # a node's id is a template name: `{{ l1.text }}`
ERROR_BRANCH = "error"  # the branch an `on_error: branch` node follows when it failed
ELSE_BRANCH = "else"  # the branch an `if_else` node follows when no case holds


class NodeType(enum.StrEnum):
    START = "start"
    END = "end"
    LLM = "llm"
    TOOL = "tool"
    TEMPLATE = "template"
    IF_ELSE = "if_else"
    HTTP_REQUEST = "http_request"
    ITERATION = "iteration"
    CODE = "code"

    @property
    def works_outside(self) -> bool:
        """Whether the node's work can fail on its own (a model, a tool, a server, code): it takes
        `retry` and `on_error`."""
        return self in (NodeType.LLM, NodeType.TOOL, NodeType.HTTP_REQUEST, NodeType.CODE)


class InputType(enum.StrEnum):
    """The JSON Schema types a start input may take."""

    STRING = "string"
    NUMBER = "number"
    INTEGER = "integer"
    BOOLEAN = "boolean"
    ARRAY = "array"
    OBJECT = "object"


class ErrorAction(enum.StrEnum):
    FAIL = "fail"  # the run fails
    DEFAULT = "default"  # the node's outputs become `on_error.value`, and the run goes on
    BRANCH = "branch"  # the run follows the node's `branch: "error"` edge instead of its others


@dataclass(frozen=True, slots=True)
class Retry:
    """Tries after the first, each `backoff` seconds after the last, doubling."""

    count: int = 0
    backoff: float = 1.0


@dataclass(frozen=True, slots=True)
class OnError:
    action: ErrorAction = ErrorAction.FAIL
    value: Any = None  # the outputs with `default`


@dataclass(frozen=True, slots=True)
class Node:
    id: str
    type: NodeType
    config: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))  # the node type's own fields
    retry: Retry = field(default_factory=Retry)
    on_error: OnError = field(default_factory=OnError)


@dataclass(frozen=True, slots=True)
class Edge:
    source: str
    target: str
    branch: str | None = None  # out of an `if_else`: a case id or "else"; out of any node: "error"


@dataclass(frozen=True, slots=True)
class Graph:
    """A graph `validation.parse_graph` accepted: ids unique, edges between its nodes, no cycle,
    one start, at least one end."""

    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...] = ()

    def node(self, node_id: str) -> Node:
        return next(n for n in self.nodes if n.id == node_id)

    @property
    def start(self) -> Node:
        return next(n for n in self.nodes if n.type is NodeType.START)

    def incoming(self, node_id: str) -> tuple[Edge, ...]:
        return tuple(e for e in self.edges if e.target == node_id)

    def outgoing(self, node_id: str) -> tuple[Edge, ...]:
        return tuple(e for e in self.edges if e.source == node_id)

    def order(self) -> tuple[str, ...]:
        """The node ids in a topological order (Kahn's, in the order the nodes are listed)."""
        waiting = {n.id: len(self.incoming(n.id)) for n in self.nodes}
        ready = [n.id for n in self.nodes if waiting[n.id] == 0]
        ordered: list[str] = []
        while ready:
            current = ready.pop(0)
            ordered.append(current)
            for edge in self.outgoing(current):
                waiting[edge.target] -= 1
                if waiting[edge.target] == 0:
                    ready.append(edge.target)
        return tuple(ordered)
