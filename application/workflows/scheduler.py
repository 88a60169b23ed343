"""The DAG scheduler: a workflow's graph run as early as its edges allow (docs/workflows.md).

Every node whose predecessors are all done starts at once, in a task of its own; so two nodes that
do not depend on each other run side by side. A node is done when it finished or was skipped. Each
finished node decides which of its outgoing edges are live: its plain edges on success; the edge
of the case an `if_else` chose; the `error` edge of an `on_error: branch` node that failed. A node
runs when its predecessors are done and at least one of its incoming edges is live; a node none of
whose incoming edges is live is `skipped`, and so are, in turn, the nodes only it led to.

A node that does work outside the process (`llm`, `tool`, `http_request`, `code`) is tried again
on failure, `retry.count` times, `retry.backoff` seconds apart, doubling; once out of tries,
`on_error` decides: `fail` ends the run, `default` gives the node `on_error.value` as its outputs,
`branch` follows its `error` edge with `{"error": message}` as its outputs. A failure of any other
node ends the run. When the run ends early (a failure, a cancellation, a timeout around it) the
nodes still running are cancelled and recorded `stopped`.

The scope the templates see is `{<node id>: outputs}` of the nodes done so far (`start`'s are the
run's inputs), plus what the caller adds (an iteration's `item` and `index`).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any, Protocol

from application.errors import ApplicationError, ToolCallFailed
from application.workflows.node_work import GraphOutcome, NodeResult
from domain.errors import DomainError
from domain.workflows.graph import ERROR_BRANCH, ErrorAction, NodeType
from domain.workflows.runs import NodeRun, NodeStatus, Spent

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping
    from datetime import datetime

    from application.ports.runtime import Clock
    from application.workflows.node_work import NodeWork, RunContext
    from domain.workflows.graph import Graph, Node

log = logging.getLogger(__name__)

STOPPED = "the run ended while the node was running"
Ended = tuple[NodeRun, str | None]  # a node's run, and the branch it took (None: its plain edges)


class Trace(Protocol):
    """Hears of each node as it starts and ends (the run's record and its event stream)."""

    def started(self, node: Node) -> None: ...

    def finished(self, node: NodeRun) -> None: ...


class _Silent:
    """The trace of an iteration's body: its nodes are the iteration node's own business."""

    def started(self, node: Node) -> None:
        pass

    def finished(self, node: NodeRun) -> None:
        pass


SILENT: Trace = _Silent()


class Scheduler:
    """`work`: each node type's work, bar `start` (its outputs are the run's inputs); `sleep`: the
    wait between two tries (a test's own)."""

    def __init__(
        self, work: Mapping[NodeType, NodeWork], clock: Clock,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._work = work
        self.clock = clock
        self._sleep = sleep

    async def run(
        self, graph: Graph, inputs: Mapping[str, Any], context: RunContext, scope: Mapping[str, Any] | None = None,
        trace: Trace = SILENT,
    ) -> GraphOutcome:
        walk = _Walk(self, graph, inputs, context, dict(scope or {}), trace)
        return await walk.run()

    async def run_node(self, node: Node, inputs: Mapping[str, Any], scope: Mapping[str, Any],
                       context: RunContext) -> Ended:
        """One node's run, its tries and its `on_error` included, and the branch it took."""
        started, clock = self.clock.now(), self.clock.monotonic()
        tries = 1 + node.retry.count if node.type.works_outside else 1
        attempt = 1
        while True:
            try:
                result = await self._once(node, inputs, scope, context)
                return self._record(node, context, NodeStatus.SUCCEEDED, started, clock, attempt, result), result.branch
            except Exception as error:  # a node's failure, whatever raised it, is the run's to decide on
                message = _message(node, error)
            if attempt >= tries:
                return self._failed(node, context, message, started, clock, attempt)
            await self._sleep(node.retry.backoff * 2 ** (attempt - 1))
            attempt += 1

    async def _once(self, node: Node, inputs: Mapping[str, Any], scope: Mapping[str, Any],
                    context: RunContext) -> NodeResult:
        if node.type is NodeType.START:
            return NodeResult(dict(inputs))
        return await self._work[node.type](node, scope, context)

    def _failed(self, node: Node, context: RunContext, message: str, started: datetime, clock: float,
                attempt: int) -> Ended:
        action = node.on_error.action if node.type.works_outside else ErrorAction.FAIL
        value = node.on_error.value
        outputs, branch = {
            ErrorAction.DEFAULT: (dict(value) if isinstance(value, dict) else {"value": value}, None),
            ErrorAction.BRANCH: ({"error": message}, ERROR_BRANCH),
            ErrorAction.FAIL: ({}, None),
        }[action]
        run = self._record(node, context, NodeStatus.FAILED, started, clock, attempt, NodeResult(outputs), message)
        if action is ErrorAction.FAIL:
            raise _NodeEndedRun(run, message)
        return run, branch

    def _record(
        self, node: Node, context: RunContext, status: NodeStatus, started: datetime, clock: float, attempt: int,
        result: NodeResult, error: str | None = None,
    ) -> NodeRun:
        return NodeRun(
            context.run_id, node.id, node.type, status, started, self.clock.now(), inputs=result.inputs,
            outputs=result.outputs, error=error, attempt=attempt, spent=result.spent,
            latency=self.clock.monotonic() - clock,
        )

    def stopped(self, node: Node, context: RunContext, started: datetime, clock: float) -> NodeRun:
        return NodeRun(context.run_id, node.id, node.type, NodeStatus.STOPPED, started, self.clock.now(),
                       error=STOPPED, latency=self.clock.monotonic() - clock)


class _NodeEndedRun(Exception):
    def __init__(self, run: NodeRun, message: str) -> None:
        super().__init__(message)
        self.run = run


def _message(node: Node, error: Exception) -> str:
    if isinstance(error, ApplicationError):
        return error.message
    if isinstance(error, DomainError):  # a value the node made that a rule refused
        return str(error)
    if isinstance(error, ToolCallFailed):
        return f"{error.failure.value}: {error.detail}"
    log.warning("workflow node %s (%s) raised %s", node.id, node.type, type(error).__name__, exc_info=error)
    return "an unexpected error inside the node"


class _Walk:
    """One run of one graph: which nodes wait on how many edges, which have a live one, what runs."""

    def __init__(self, scheduler: Scheduler, graph: Graph, inputs: Mapping[str, Any], context: RunContext,
                 scope: dict[str, Any], trace: Trace) -> None:
        self._scheduler, self._graph, self._inputs, self._context = scheduler, graph, inputs, context
        self._scope, self._trace, self._clock = scope, trace, scheduler.clock
        self._waiting = {n.id: 0 for n in graph.nodes}
        self._out: dict[str, list[tuple[str, str | None]]] = {n.id: [] for n in graph.nodes}
        for edge in graph.edges:
            self._waiting[edge.target] += 1
            self._out[edge.source].append((edge.target, edge.branch))
        self._live: set[str] = set()
        self._nodes = {n.id: n for n in graph.nodes}
        self._running: dict[asyncio.Task[Ended], tuple[Node, datetime, float]] = {}
        self._spent = Spent()
        self._ends: dict[str, Mapping[str, Any]] = {}
        # Each node's task, as it ends: cheaper than asyncio.wait, which sets up a wait on every task each time.
        self._ended: asyncio.Queue[asyncio.Task[Ended]] = asyncio.Queue()

    async def run(self) -> GraphOutcome:
        for node in self._graph.nodes:
            if self._waiting[node.id] == 0:
                self._start(node)
        try:
            while self._running:
                self._done(await self._ended.get())
        except _NodeEndedRun as failure:
            await self._stop()
            return GraphOutcome({}, self._spent, f"node {failure.run.node_id} failed: {failure}")
        except asyncio.CancelledError:
            await self._stop()
            raise
        outputs = {k: v for end in self._graph.nodes if end.id in self._ends for k, v in self._ends[end.id].items()}
        return GraphOutcome(outputs, self._spent)

    def _start(self, node: Node) -> None:
        self._trace.started(node)
        task = asyncio.create_task(self._scheduler.run_node(node, self._inputs, self._scope, self._context))
        task.add_done_callback(self._ended.put_nowait)
        self._running[task] = (node, self._clock.now(), self._clock.monotonic())

    def _done(self, task: asyncio.Task[Ended]) -> None:
        node, _, _ = self._running.pop(task)
        try:
            run, branch = task.result()
        except _NodeEndedRun as failure:
            self._spent += failure.run.spent
            self._trace.finished(failure.run)
            raise
        self._spent += run.spent
        self._trace.finished(run)
        self._scope[node.id] = run.outputs
        if node.type is NodeType.END:
            self._ends[node.id] = run.outputs
        self._resolve(node.id, branch, alive=True)

    def _resolve(self, source: str, branch: str | None, alive: bool) -> None:
        """`source` is done: its edges are live or dead, and the nodes they complete start or are skipped."""
        for target, label in self._out[source]:
            if alive and label == branch:
                self._live.add(target)
            self._waiting[target] -= 1
            if self._waiting[target]:
                continue
            node = self._nodes[target]
            if target in self._live:
                self._start(node)
            else:
                self._trace.finished(NodeRun.skipped(self._context.run_id, target, node.type, self._clock.now()))
                self._resolve(target, None, alive=False)

    async def _stop(self) -> None:
        """Cancels the nodes still running; one that ended meanwhile is recorded as it ended."""
        for task in self._running:
            task.cancel()
        await asyncio.gather(*self._running, return_exceptions=True)
        for task, (node, started, clock) in self._running.items():
            run = _ended(task) or self._scheduler.stopped(node, self._context, started, clock)
            self._spent += run.spent
            self._trace.finished(run)
        self._running.clear()


def _ended(task: asyncio.Task[Ended]) -> NodeRun | None:
    """The run of a node that ended before it could be cancelled; None for one cancelled."""
    if task.cancelled():
        return None
    error = task.exception()
    if error is None:
        return task.result()[0]
    return error.run if isinstance(error, _NodeEndedRun) else None
