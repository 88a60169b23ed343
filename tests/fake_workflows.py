"""Test doubles of the workflow engine's ports: a run store in memory (the SQL adapter is the real
one), templates that read `{{ a.b }}` paths and evaluate Python-like expressions over the scope (the
Jinja adapter is the real one), and graph builders."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import UTC
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from application.errors import Conflict, NodeFailed
from application.ports.code_sandbox import CodeLimits, CodeSandbox
from application.ports.templates import Templates
from application.ports.workflow_runs import RecordedRun, WorkflowRunStore
from domain.workflows.graph import Edge, ErrorAction, Graph, Node, NodeType, OnError, Retry

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from domain.ids import EndUserId, OwnerId
    from domain.workflows.runs import NodeRun, WorkflowRun

_PLACEHOLDER = re.compile(r"\{\{(.*?)\}\}")
_BRACED = re.compile(r"^\s*\{\{(.*)\}\}\s*$", re.DOTALL)


class _Dotted:
    """A mapping read as attributes (`start.city`), as a template reads it."""

    def __init__(self, value: Mapping[str, Any]) -> None:
        self._value = value

    def __getattr__(self, name: str) -> Any:
        try:
            return _dotted(self._value[name])
        except KeyError:
            raise NodeFailed(f"no `{name}` here") from None


def _dotted(value: Any) -> Any:
    return _Dotted(value) if isinstance(value, dict | MappingProxyType) else value


def _plain(value: Any) -> Any:
    return value._value if isinstance(value, _Dotted) else value


class FakeTemplates(Templates):
    def problem(self, template: str) -> str | None:
        return None

    def names(self, template: str) -> frozenset[str]:
        return frozenset(m.group(1).strip().split(".")[0] for m in _PLACEHOLDER.finditer(template))

    async def render(self, template: str, scope: Mapping[str, Any]) -> str:
        parts = [(m, await self.evaluate(m.group(1), scope)) for m in _PLACEHOLDER.finditer(template)]
        text = template
        for match, value in reversed(parts):
            text = text[:match.start()] + str(value) + text[match.end():]
        return text

    async def evaluate(self, expression: str, scope: Mapping[str, Any]) -> Any:
        braced = _BRACED.match(expression)
        names = {name: _dotted(value) for name, value in scope.items()}
        try:
            return _plain(eval(braced.group(1) if braced else expression, {"__builtins__": {}}, names))  # noqa: S307
        except NameError as error:
            raise NodeFailed(str(error)) from None


class FakeCodeSandbox(CodeSandbox):
    """Refuses code naming `__import__` before it runs; runs `fail` as a failure, any other code as a sum."""

    def problem(self, source: str) -> str | None:
        return "`__import__` is not allowed" if "__import__" in source else None

    async def run(self, source: str, inputs: Mapping[str, Any], limits: CodeLimits) -> dict[str, Any]:
        if source == "fail":
            raise NodeFailed("the code raised ZeroDivisionError")
        return {"total": sum(inputs["numbers"]), "count": len(inputs["numbers"])}


class FakeWorkflowRunStore(WorkflowRunStore):
    def __init__(self) -> None:
        self.runs: dict[str, WorkflowRun] = {}
        self.nodes: dict[str, tuple[NodeRun, ...]] = {}

    async def start(self, run: WorkflowRun) -> None:
        self.runs[run.id] = replace(run, started_at=run.started_at.astimezone(UTC))  # as a database gives it back

    async def finish(self, run: WorkflowRun, nodes: Sequence[NodeRun]) -> None:
        if self.runs[run.id].is_finished:
            raise Conflict(f"The workflow run {run.id} is not running: it cannot finish again.")
        self.runs[run.id] = run
        self.nodes[run.id] = tuple(nodes)

    async def get(self, run_id: str, owner: OwnerId, end_user: EndUserId | None = None) -> RecordedRun | None:
        run = self.runs.get(run_id)
        if run is None or not run.visible_to(owner, end_user):
            return None
        return RecordedRun(run, self.nodes.get(run_id, ()))

    def only(self) -> RecordedRun:
        [run] = self.runs.values()
        return RecordedRun(run, self.nodes.get(run.id, ()))


def node(node_id: str, kind: NodeType = NodeType.TEMPLATE, *, retry: int = 0, backoff: float = 1.0,
         on_error: ErrorAction = ErrorAction.FAIL, value: Any = None, **config: Any) -> Node:
    return Node(node_id, kind, MappingProxyType(config), Retry(retry, backoff), OnError(on_error, value))


def start(*inputs: dict[str, Any]) -> Node:
    return node("start", NodeType.START, inputs=list(inputs))


def end(**outputs: str) -> Node:
    return node("end", NodeType.END, outputs=outputs)


def edges(*pairs: str) -> tuple[Edge, ...]:
    """`"a>b"`, or `"a>b:branch"` for an edge with a branch."""
    made = []
    for pair in pairs:
        link, _, branch = pair.partition(":")
        source, target = link.split(">")
        made.append(Edge(source, target, branch or None))
    return tuple(made)


def graph(nodes: Sequence[Node], *pairs: str) -> Graph:
    return Graph(tuple(nodes), edges(*pairs))


def finished(run: RecordedRun) -> dict[str, str]:
    """Each node's status, by id."""
    return {n.node_id: n.status.value for n in run.nodes}
