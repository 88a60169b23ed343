"""A workflow's graph as JSON gives it, checked and parsed into a `Graph`; every problem is named by
its path (`nodes[2].prompt`, `edges[0].target`, `nodes[3].body.nodes[0].template`).

What is checked: the fields of each node type (`node_fields`), node ids (unique in the whole
workflow, bodies included, so that a template's `l1` means one node), edges between nodes of one
graph, branches (a case of the `if_else` they leave, `else`, or `error` out of a node whose
`on_error` is `branch`), no cycle, exactly one `start` (whose id is `start`: templates read its
inputs as `start.<name>`) and at least one `end`, every node but the start reached by an edge, and
that a template reads only nodes that run before it. An `iteration`'s `body` is a graph of its own,
checked the same way, except that it has no start: its first nodes read `item` and `index`, and
what the iteration node itself may read.

Templates are parsed by a port (Jinja2 lives in infrastructure), so the caller gives two functions:
`names_in` (a template's root names) and `problem_in` (its syntax error, or None).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from domain.workflows.graph import (
    ELSE_BRANCH,
    ERROR_BRANCH,
    NODE_ID,
    Edge,
    ErrorAction,
    Graph,
    Node,
    NodeType,
)
from domain.workflows.node_fields import Text, case_ids, field_problems, on_error_of, retry_of
from domain.workflows.problems import Problem, WorkflowInvalid

NamesIn = Callable[[str], frozenset[str]]
ProblemIn = Callable[[str], "str | None"]

START_ID = "start"
BODY_NAMES = frozenset({"item", "index"})  # what an iteration's body reads of the item it runs for
MAX_NODES = 500
_NODE_ID = re.compile(NODE_ID)


def parse_graph(raw: Any, names_in: NamesIn, problem_in: ProblemIn) -> Graph:
    """The graph, or `WorkflowInvalid` with every problem found."""
    problems: list[Problem] = []
    every_id = _every_id(raw, "", problems, set())
    graph = _Level(names_in, problem_in, every_id, problems).graph(raw, "", frozenset(), in_body=False)
    if problems:
        raise WorkflowInvalid(problems)
    return graph


def _raw_nodes(raw: Any) -> list[Any]:
    nodes = raw.get("nodes") if isinstance(raw, dict) else None
    return nodes if isinstance(nodes, list) else []


def _every_id(raw: Any, path: str, problems: list[Problem], seen: set[str]) -> frozenset[str]:
    """The node ids of the whole workflow, bodies included; a malformed, reserved or repeated one is a problem."""
    for index, node in enumerate(_raw_nodes(raw)):
        if not isinstance(node, dict):
            continue
        at, node_id = f"{path}nodes[{index}]", node.get("id")
        if not isinstance(node_id, str) or not _NODE_ID.fullmatch(node_id):
            problems.append(Problem(f"{at}.id", "1 to 64 letters, digits or '_', starting with a letter"))
        elif node_id in BODY_NAMES:
            problems.append(Problem(f"{at}.id", f"{node_id!r} is what an iteration's body reads: pick another id"))
        elif node_id in seen:
            problems.append(Problem(f"{at}.id", f"the id {node_id!r} is taken by another node"))
        else:
            seen.add(node_id)
        if node.get("type") == NodeType.ITERATION:
            _every_id(node.get("body"), f"{at}.body.", problems, seen)
    return frozenset(seen)


@dataclass(frozen=True, slots=True)
class _Parsed:
    """A node read from JSON, before its body (if any) is."""

    index: int
    node: Node
    raw: Mapping[str, Any]
    texts: tuple[Text, ...]


class _Level:
    """Reads one graph: the workflow's, or an iteration's body (`in_body`)."""

    def __init__(self, names_in: NamesIn, problem_in: ProblemIn, every_id: frozenset[str],
                 problems: list[Problem]) -> None:
        self._names_in = names_in
        self._problem_in = problem_in
        self._every_id = every_id
        self._problems = problems

    def graph(self, raw: Any, path: str, outer: frozenset[str], *, in_body: bool) -> Graph:
        if not isinstance(raw, dict) or not isinstance(raw.get("nodes"), list):
            self._problems.append(Problem(path.rstrip(".") or "", "a graph is an object {nodes: [...], edges: [...]}"))
            return Graph(())
        self._problems.extend(Problem(f"{path}{key}", "not a field of a graph (fields: nodes, edges)")
                              for key in raw if key not in ("nodes", "edges"))
        if len(raw["nodes"]) > MAX_NODES:
            self._problems.append(Problem(f"{path}nodes", f"at most {MAX_NODES} nodes"))
            return Graph(())
        parsed = [p for index, node in enumerate(raw["nodes"]) if (p := self._node(node, index, path)) is not None]
        self._ends(parsed, path, in_body=in_body)
        edges = self._edges(raw.get("edges", []), parsed, path, in_body=in_body)
        self._cycles(parsed, edges, path)
        ancestors = _ancestors(parsed, edges)
        scope = outer | (BODY_NAMES if in_body else frozenset()) | {START_ID}
        nodes = []
        for item in parsed:
            visible = scope | ancestors[item.node.id]
            self._texts(item, visible, in_body=in_body)
            nodes.append(self._with_body(item, path, visible))
        return Graph(tuple(nodes), tuple(edges))

    def _node(self, raw: Any, index: int, path: str) -> _Parsed | None:
        at = f"{path}nodes[{index}]"
        if not isinstance(raw, dict):
            self._problems.append(Problem(at, "a node is an object {id, type, …}"))
            return None
        kind = raw.get("type")
        if kind not in tuple(NodeType):
            self._problems.append(Problem(f"{at}.type", f"unknown node type {kind!r} (types: {', '.join(NodeType)})"))
            return None
        node_type, texts = NodeType(kind), list[Text]()
        self._problems.extend(field_problems(node_type, raw, at, texts))
        retry = retry_of(raw.get("retry"), f"{at}.retry", self._problems)
        on_error = on_error_of(raw.get("on_error"), f"{at}.on_error", self._problems)
        config = {k: v for k, v in raw.items() if k not in ("id", "type", "retry", "on_error")}
        node_id = raw["id"] if isinstance(raw.get("id"), str) else f"#{index}"  # a bad id is a problem already
        return _Parsed(index, Node(node_id, node_type, MappingProxyType(config), retry, on_error), raw, tuple(texts))

    def _ends(self, parsed: list[_Parsed], path: str, *, in_body: bool) -> None:
        starts = [p for p in parsed if p.node.type is NodeType.START]
        if in_body:
            self._problems.extend(Problem(f"{path}nodes[{p.index}].type", "an iteration's body has no start node: "
                                          "its first nodes read `item` and `index`") for p in starts)
        elif not starts:
            self._problems.append(Problem(f"{path}nodes", "no start node: a workflow has exactly one"))
        else:
            if starts[0].node.id != START_ID:
                self._problems.append(Problem(f"{path}nodes[{starts[0].index}].id",
                                              f"the start node's id is {START_ID!r}: templates read `start.<input>`"))
            self._problems.extend(Problem(f"{path}nodes[{p.index}].type", "a second start node: a workflow has "
                                          "exactly one") for p in starts[1:])
        if not any(p.node.type is NodeType.END for p in parsed):
            self._problems.append(Problem(f"{path}nodes", "no end node: its outputs are what the run gives"))

    def _edges(self, raw: Any, parsed: list[_Parsed], path: str, *, in_body: bool) -> list[Edge]:
        if not isinstance(raw, list):
            self._problems.append(Problem(f"{path}edges", "a list of edges, each {source, target, branch?}"))
            return []
        by_id = {p.node.id: p for p in parsed}
        edges: list[Edge] = []
        for index, item in enumerate(raw):
            edge = self._edge(item, f"{path}edges[{index}]", by_id)
            if edge is not None and edge in edges:
                self._problems.append(Problem(f"{path}edges[{index}]", "the same edge is listed twice"))
            elif edge is not None:
                edges.append(edge)
        if not in_body:
            reached = {e.target for e in edges}
            self._problems.extend(Problem(f"{path}nodes[{p.index}]", "no edge leads to it: every node but the start "
                                          "runs after another") for p in parsed
                                  if p.node.type is not NodeType.START and p.node.id not in reached)
        self._error_edges(parsed, edges, path)
        return edges

    def _edge(self, raw: Any, at: str, by_id: Mapping[str, _Parsed]) -> Edge | None:
        if not isinstance(raw, dict):
            self._problems.append(Problem(at, "an edge is an object {source, target, branch?}"))
            return None
        problems = [Problem(f"{at}.{key}", "not a field of an edge (fields: source, target, branch)")
                    for key in raw if key not in ("source", "target", "branch")]
        for end in ("source", "target"):
            if raw.get(end) not in by_id:
                problems.append(Problem(f"{at}.{end}", f"no node {raw.get(end)!r} in this graph"))
        branch = raw.get("branch")
        if not problems:
            problems += _branch_problems(by_id[raw["source"]], by_id[raw["target"]], branch, at)
        self._problems.extend(problems)
        return None if problems else Edge(raw["source"], raw["target"], branch)

    def _error_edges(self, parsed: list[_Parsed], edges: list[Edge], path: str) -> None:
        for item in parsed:
            wants = item.node.on_error.action is ErrorAction.BRANCH
            if wants and not any(e.source == item.node.id and e.branch == ERROR_BRANCH for e in edges):
                self._problems.append(Problem(f"{path}nodes[{item.index}].on_error",
                                              f"`branch` follows an edge with branch {ERROR_BRANCH!r}: add one"))

    def _cycles(self, parsed: list[_Parsed], edges: list[Edge], path: str) -> None:
        looped = set(Graph(tuple(p.node for p in parsed), tuple(edges)).order()) ^ {p.node.id for p in parsed}
        if looped:
            names = ", ".join(p.node.id for p in parsed if p.node.id in looped)
            self._problems.append(Problem(f"{path}edges", f"a cycle: the nodes {names} are on it or after it"))

    def _texts(self, item: _Parsed, visible: frozenset[str], *, in_body: bool) -> None:
        for text in item.texts:
            source = text.text if not text.expression or "{{" in text.text else f"{{{{ {text.text} }}}}"
            problem = self._problem_in(source)
            if problem is None:
                problem = self._names_problem(self._names_in(source), visible, in_body=in_body)
            if problem is not None:
                self._problems.append(Problem(text.path, problem))

    def _names_problem(self, names: frozenset[str], visible: frozenset[str], *, in_body: bool) -> str | None:
        """One sentence for every name the text may not read, or None."""
        early = sorted(n for n in names if n in self._every_id and n not in visible)
        outside = sorted(n for n in names if n in BODY_NAMES and not in_body)
        parts = [f"reads {_listed(early)}, {'a node that does' if len(early) == 1 else 'nodes that do'} not run "
                 "before it"] if early else []
        if outside:
            parts.append(f"reads {_listed(outside)}, which only an iteration's body has")
        return "; ".join(parts) or None

    def _with_body(self, item: _Parsed, path: str, visible: frozenset[str]) -> Node:
        if item.node.type is not NodeType.ITERATION or "body" not in item.raw:
            return item.node
        at = f"{path}nodes[{item.index}].body."
        body = self.graph(item.raw["body"], at, visible - {item.node.id}, in_body=True)
        return Node(item.node.id, item.node.type, MappingProxyType({**item.node.config, "body": body}),
                    item.node.retry, item.node.on_error)


def _listed(names: list[str]) -> str:
    return " and ".join(f"`{name}`" for name in names)


def _branch_problems(source: _Parsed, target: _Parsed, branch: Any, at: str) -> list[Problem]:
    if target.node.type is NodeType.START:
        return [Problem(f"{at}.target", "nothing runs before the start node")]
    if source.node.type is NodeType.END:
        return [Problem(f"{at}.source", "an end node ends its graph: no edge leaves it")]
    if source.node.type is NodeType.IF_ELSE:
        cases = case_ids(source.raw)
        if branch not in cases and branch != ELSE_BRANCH:
            known = ", ".join(sorted(cases | {ELSE_BRANCH}))
            return [Problem(f"{at}.branch", f"an edge out of an if_else names one of its cases or else ({known})")]
        return []
    if branch is None:
        return []
    if branch == ERROR_BRANCH and source.node.on_error.action is ErrorAction.BRANCH:
        return []
    return [Problem(f"{at}.branch", f"only an if_else's edges name a case; {ERROR_BRANCH!r} leaves a node whose "
                                    "on_error action is `branch`")]


def _ancestors(parsed: list[_Parsed], edges: list[Edge]) -> dict[str, frozenset[str]]:
    """Each node's ancestors: the nodes that run before it (a cycle's nodes are each other's)."""
    before: dict[str, set[str]] = {p.node.id: set() for p in parsed}
    for edge in edges:
        before[edge.target].add(edge.source)
    found: dict[str, frozenset[str]] = {}
    for node_id in before:
        seen: set[str] = set()
        waiting = list(before[node_id])
        while waiting:
            current = waiting.pop()
            if current not in seen:
                seen.add(current)
                waiting.extend(before[current])
        found[node_id] = frozenset(seen)
    return found
