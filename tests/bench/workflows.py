"""What the workflow scheduler costs (issue 38): its overhead per node beside a direct call of the
same node's work, two independent 1 s nodes side by side, a 100-node chain and a 50-item iteration.

    python -m tests.bench.workflows

Every node is a `template` node on the real Jinja adapter (its work is what a direct call times
too); runs go through `RunWorkflow` with the run store in memory, so a node's record and events are
counted, the database's round trips are not. Each figure runs in a process of its own, so its peak
RSS is its own.

Prints JSON: `overhead_per_node_ms` (p50 and p95 of (scheduled - direct) / nodes, target p50 ≤ 1 ms),
`two_independent_1s_nodes` (wall seconds, target ≤ 1.2 s), `chain_100` and `iteration_50` (p50 and
p95 ms, peak RSS MiB).
"""

from __future__ import annotations

import asyncio
import json
import resource
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any

from application.workflows.node_work import RunContext
from application.workflows.nodes.basic import EndWork, TemplateWork
from application.workflows.nodes.iteration import IterationWork
from application.workflows.run_workflow import RunRequest, RunWorkflow
from application.workflows.scheduler import Scheduler
from domain.ids import EndUserId, OwnerId
from domain.workflows.graph import Edge, Graph, Node, NodeType
from infrastructure.runtime.system import SystemClock, UuidGenerator
from infrastructure.workflows.jinja_templates import JinjaTemplates
from tests.bench.timing import percentile, timed
from tests.fake_workflows import FakeWorkflowRunStore

if TYPE_CHECKING:
    from application.workflows.node_work import NodeResult, NodeWork

OWNER = OwnerId("bench")
CHAIN = 20  # nodes whose overhead is shared out
RUNS = 200
START = Node("start", NodeType.START, {"inputs": [{"name": "n", "type": "integer"}]})


class Sleeps:
    """A node whose work is waiting on something else (a model, a server) for `seconds`."""

    def __init__(self, work: NodeWork, seconds: float) -> None:
        self._work = work
        self._seconds = seconds

    async def __call__(self, node: Node, scope: Any, context: RunContext) -> NodeResult:
        await asyncio.sleep(self._seconds)
        return await self._work(node, scope, context)


def chain(count: int, template: str = "{{ start.n }}") -> Graph:
    nodes = [START]
    nodes += [Node(f"n{i}", NodeType.TEMPLATE, {"template": template}) for i in range(count)]
    nodes.append(Node("end", NodeType.END, {"outputs": {"last": f"{{{{ n{count - 1}.output }}}}"}}))
    ids = [n.id for n in nodes]
    return Graph(tuple(nodes), tuple(Edge(a, b) for a, b in zip(ids, ids[1:], strict=False)))


def engine(work: NodeWork | None = None) -> tuple[RunWorkflow, Scheduler]:
    templates = JinjaTemplates()
    works: dict[NodeType, NodeWork] = {NodeType.TEMPLATE: work or TemplateWork(templates),
                                       NodeType.END: EndWork(templates), NodeType.ITERATION: IterationWork(templates)}
    scheduler = Scheduler(works, SystemClock())
    return RunWorkflow(scheduler, FakeWorkflowRunStore(), SystemClock(), UuidGenerator()), scheduler


def request(graph: Graph) -> RunRequest:
    return RunRequest(OWNER, EndUserId(""), "bench", 1, graph, {"n": 7})


async def overhead() -> dict[str, Any]:
    """The same template work called CHAIN times directly, and as CHAIN chained nodes of a run."""
    run, scheduler = engine()
    work = TemplateWork(JinjaTemplates())
    graph = chain(CHAIN)
    node = graph.node("n0")
    scope = {"start": {"n": 7}}
    context = RunContext("r", OWNER, EndUserId(""), 1, scheduler)

    async def direct() -> None:
        for _ in range(CHAIN + 2):  # as many works as the run's nodes, its start and end included
            await work(node, scope, context)

    async def scheduled() -> None:
        await run(request(graph))

    direct_ms, scheduled_ms = await timed([direct, scheduled], RUNS)
    per_node = [(s - d) / (CHAIN + 2) for s, d in zip(scheduled_ms, direct_ms, strict=True)]
    return {"nodes": CHAIN + 2, "direct_run_p50_ms": percentile(direct_ms, 0.5),
            "scheduled_run_p50_ms": percentile(scheduled_ms, 0.5),
            "overhead_per_node_ms": {"p50": percentile(per_node, 0.5), "p95": percentile(per_node, 0.95)},
            "target_p50_ms": 1.0}


async def side_by_side() -> dict[str, Any]:
    templates = JinjaTemplates()
    run, _ = engine(Sleeps(TemplateWork(templates), 1.0))
    nodes = (START, Node("a", NodeType.TEMPLATE, {"template": "a"}),
             Node("b", NodeType.TEMPLATE, {"template": "b"}),
             Node("end", NodeType.END, {"outputs": {"a": "{{ a.output }}", "b": "{{ b.output }}"}}))
    graph = Graph(nodes, (Edge("start", "a"), Edge("start", "b"), Edge("a", "end"), Edge("b", "end")))
    started = time.perf_counter()
    await run(request(graph))
    return {"wall_s": round(time.perf_counter() - started, 3), "target_s": 1.2}


async def chain_100() -> dict[str, Any]:
    run, _ = engine()
    graph = chain(100)

    async def once() -> None:
        await run(request(graph))

    [times] = await timed([once], 50)
    return {"p50_ms": percentile(times, 0.5), "p95_ms": percentile(times, 0.95)}


async def iteration_50() -> dict[str, Any]:
    run, _ = engine()
    body = Graph((Node("t", NodeType.TEMPLATE, {"template": "{{ index }}: {{ item }}"}),
                  Node("end", NodeType.END, {"outputs": {"line": "{{ t.output }}"}})), (Edge("t", "end"),))
    nodes = (START,
             Node("loop", NodeType.ITERATION, {"items": "range(50) | list", "body": body}),
             Node("end", NodeType.END, {"outputs": {"lines": "{{ loop.outputs }}"}}))
    graph = Graph(nodes, (Edge("start", "loop"), Edge("loop", "end")))

    async def once() -> None:
        await run(request(graph))

    [times] = await timed([once], 50)
    return {"items": 50, "parallelism": 4, "p50_ms": percentile(times, 0.5), "p95_ms": percentile(times, 0.95)}


FIGURES = {"overhead": overhead, "two_independent_1s_nodes": side_by_side, "chain_100": chain_100,
           "iteration_50": iteration_50}


def one(name: str) -> dict[str, Any]:
    figures = asyncio.run(FIGURES[name]())
    return {**figures, "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}


def main() -> dict[str, Any]:
    """Each figure in a fresh interpreter: a peak RSS is a process's highest, never reset."""
    results = {}
    for name in FIGURES:
        child = subprocess.run([sys.executable, "-m", "tests.bench.workflows", name], capture_output=True,
                               text=True, check=True)
        results[name] = json.loads(child.stdout)
    return results


if __name__ == "__main__":
    print(json.dumps(one(sys.argv[1]) if len(sys.argv) > 1 else main(), indent=2, ensure_ascii=False))
