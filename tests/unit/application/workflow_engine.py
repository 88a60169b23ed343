"""The workflow engine as the unit tests build it: the real scheduler and node types over in-process
doubles, with `llm` nodes whose work each test scripts by node id."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from application.workflows.node_work import NodeResult
from application.workflows.nodes.basic import EndWork, IfElseWork, TemplateWork
from application.workflows.nodes.iteration import IterationWork
from application.workflows.run_workflow import RunRequest, RunWorkflow
from application.workflows.scheduler import Scheduler
from domain.ids import EndUserId, OwnerId
from domain.workflows.graph import NodeType
from tests.fake_workflows import FakeTemplates, FakeWorkflowRunStore
from tests.fakes import FakeClock, SequentialIds

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping

    from application.workflows.node_work import NodeWork, RunContext
    from domain.workflows.events import WorkflowEvent
    from domain.workflows.graph import Graph, Node
    from domain.workflows.runs import WorkflowRun

    Script = Callable[[Mapping[str, Any], RunContext], Awaitable[Mapping[str, Any]]]

ALICE = OwnerId("alice")


class ScriptedWork:
    """An `llm` node's work, scripted per node id: the outputs its script returns, or what it raises."""

    def __init__(self) -> None:
        self.scripts: dict[str, Script] = {}
        self.calls: list[str] = []

    async def __call__(self, node: Node, scope: Mapping[str, Any], context: RunContext) -> NodeResult:
        self.calls.append(node.id)
        return NodeResult(await self.scripts[node.id](scope, context))


class FakeSleep:
    """The waits between tries, kept rather than slept."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


class Engine:
    def __init__(self, timeout: float = 60.0, max_depth: int = 3, work: Mapping[NodeType, NodeWork] | None = None,
                 ) -> None:
        templates = FakeTemplates()
        self.scripted = ScriptedWork()
        self.sleep = FakeSleep()
        self.store = FakeWorkflowRunStore()
        self.events: list[WorkflowEvent] = []
        self.clock = FakeClock()
        works: dict[NodeType, NodeWork] = {
            NodeType.TEMPLATE: TemplateWork(templates), NodeType.IF_ELSE: IfElseWork(templates),
            NodeType.END: EndWork(templates), NodeType.ITERATION: IterationWork(templates),
            NodeType.LLM: self.scripted,
        }
        works.update(work or {})
        self.scheduler = Scheduler(works, self.clock, sleep=self.sleep)
        self.run_workflow = RunWorkflow(self.scheduler, self.store, self.clock, SequentialIds(), timeout=timeout,
                                        max_depth=max_depth)

    def script(self, node_id: str, script: Script) -> None:
        self.scripted.scripts[node_id] = script

    def returns(self, node_id: str, **outputs: Any) -> None:
        async def script(scope: Mapping[str, Any], context: RunContext) -> Mapping[str, Any]:
            return outputs

        self.script(node_id, script)

    async def run(self, graph: Graph, **inputs: Any) -> WorkflowRun:
        request = RunRequest(ALICE, EndUserId(""), "wf1", 1, graph, inputs)
        return await self.run_workflow(request, self.events.append)

    def event_names(self) -> list[str]:
        return [f"{e.kind.value}:{e.data.get('node_id', '')}".rstrip(":") for e in self.events]


async def both_started(gate: dict[str, Any], name: str) -> None:
    """Waits until `gate["expected"]` nodes have come here: only nodes that run side by side can."""
    gate.setdefault("arrived", []).append(name)
    event: asyncio.Event = gate.setdefault("event", asyncio.Event())
    if len(gate["arrived"]) == gate["expected"]:
        event.set()
    await event.wait()
