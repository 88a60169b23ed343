"""RunWorkflow: inputs checked before anything runs, a run recorded with its nodes however it ends
(succeeded, failed, timeout, stopped by its caller), nesting depth counted once per nesting and
bounded, and its events in order."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import pytest

from application.errors import InvalidInput
from application.workflows.depth import current_depth
from application.workflows.node_work import NodeResult
from application.workflows.run_workflow import RunRequest
from domain.ids import EndUserId, OwnerId
from domain.workflows.events import WorkflowEventKind
from domain.workflows.graph import NodeType
from domain.workflows.problems import InputsInvalid
from domain.workflows.runs import NodeStatus, RunStatus, Spent
from tests.fake_workflows import end, finished, graph, node, start
from tests.unit.application.workflow_engine import ALICE, Engine

if TYPE_CHECKING:
    from collections.abc import Mapping

    from application.workflows.node_work import RunContext
    from domain.workflows.graph import Node

LLM = NodeType.LLM
CITY = {"name": "city", "type": "string"}


def waits_forever(engine: Engine, node_id: str) -> asyncio.Event:
    """The node's work blocks for good; the event is set once it is running."""
    running = asyncio.Event()

    async def script(scope: Mapping[str, Any], context: RunContext) -> Mapping[str, Any]:
        running.set()
        await asyncio.Event().wait()
        return {}

    engine.script(node_id, script)
    return running


async def test_a_run_is_recorded_with_its_inputs_outputs_and_nodes_in_the_order_they_ran() -> None:
    engine = Engine()
    engine.returns("l1", text="sunny")
    flow = graph([start(CITY), node("l1", LLM), end(weather="{{ start.city }} is {{ l1.text }}")],
                 "start>l1", "l1>end")
    run = await engine.run(flow, city="Paris")
    recorded = await engine.store.get(run.id, ALICE)
    assert recorded is not None
    assert recorded.run == run
    assert (run.status, dict(run.inputs), dict(run.outputs)) == (
        RunStatus.SUCCEEDED, {"city": "Paris"}, {"weather": "Paris is sunny"})
    assert (run.workflow_id, run.version, run.depth, run.error) == ("wf1", 1, 1, None)
    assert [n.node_id for n in recorded.nodes] == ["start", "l1", "end"]
    assert run.finished_at is not None
    assert run.latency > 0
    assert await engine.store.get(run.id, OwnerId("mallory")) is None
    assert await engine.store.get(run.id, ALICE, EndUserId("someone-else")) is None


async def test_the_events_tell_each_node_as_it_starts_and_finishes() -> None:
    engine = Engine()
    engine.returns("l1", text="sunny")
    flow = graph([start(CITY), node("l1", LLM), end(out="{{ l1.text }}")], "start>l1", "l1>end")
    run = await engine.run(flow, city="Paris")
    assert engine.event_names() == [
        "workflow_started", "node_started:start", "node_finished:start", "node_started:l1", "node_finished:l1",
        "node_started:end", "node_finished:end", "workflow_finished",
    ]
    l1 = engine.events[4].to_dict()
    assert (l1["status"], l1["outputs"], l1["workflow_run_id"]) == ("succeeded", {"text": "sunny"}, run.id)
    assert engine.events[-1].data["outputs"] == {"out": "sunny"}
    assert engine.events[0].kind is WorkflowEventKind.WORKFLOW_STARTED


async def test_missing_and_mistyped_inputs_are_refused_by_name_before_anything_runs() -> None:
    engine = Engine()
    flow = graph([start(CITY, {"name": "days", "type": "integer"}), end(out="x")], "start>end")
    with pytest.raises(InputsInvalid) as refused:
        await engine.run(flow, days="three")
    assert {p.path for p in refused.value.problems} == {"inputs.city", "inputs.days"}
    assert engine.store.runs == {}
    assert engine.events == []


async def test_a_run_past_its_timeout_ends_timeout_with_its_running_nodes_stopped() -> None:
    engine = Engine(timeout=0.05)
    waits_forever(engine, "slow")
    flow = graph([start(), node("slow", LLM), end(out="x")], "start>slow", "slow>end")
    run = await engine.run(flow)
    assert run.status is RunStatus.TIMEOUT
    assert run.error == "The run took longer than 0.05 s."
    assert finished(engine.store.only()) == {"start": "succeeded", "slow": "stopped"}


async def test_a_cancelled_run_is_recorded_stopped_and_the_cancellation_goes_on() -> None:
    engine = Engine()
    running = waits_forever(engine, "slow")
    engine.returns("fast", text="done")
    flow = graph([start(), node("fast", LLM), node("slow", LLM), end(out="x")],
                 "start>fast", "start>slow", "fast>end", "slow>end")
    task = asyncio.create_task(engine.run(flow))
    await running.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    recorded = engine.store.only()
    assert (recorded.run.status, recorded.run.error) == (RunStatus.STOPPED, "The run was stopped.")
    assert finished(recorded) == {"start": "succeeded", "fast": "succeeded", "slow": "stopped"}
    assert engine.event_names()[-1] == "workflow_finished"
    assert engine.events[-1].data["status"] == "stopped"


class NestedRun:
    """A `tool` node whose tool runs the same workflow again, as a workflow tool inside a workflow does."""

    def __init__(self) -> None:
        self.engine: Engine | None = None
        self.depths: list[int] = []

    async def __call__(self, node: Node, scope: Mapping[str, Any], context: RunContext) -> NodeResult:
        self.depths.append(current_depth())
        assert self.engine is not None
        run = await self.engine.run_workflow(RunRequest(ALICE, EndUserId(""), "wf1", 1, FLOW))
        return NodeResult({"result": run.error or "ok"})


FLOW = graph([start(), node("again", NodeType.TOOL, tool="wf1"), end(out="{{ again.result }}")],
             "start>again", "again>end")


async def test_each_nesting_counts_once_and_a_run_past_the_limit_is_refused() -> None:
    nested = NestedRun()
    engine = nested.engine = Engine(max_depth=3, work={NodeType.TOOL: nested})
    run = await engine.run(FLOW)
    assert nested.depths == [1, 2, 3]
    assert sorted(r.depth for r in engine.store.runs.values()) == [1, 2, 3]
    deepest = next(r for r in engine.store.runs.values() if r.depth == 3)
    assert deepest.status is RunStatus.FAILED
    assert deepest.error == ("node again failed: Workflows run inside each other at most 3 deep; "
                             "this one would be 4 deep.")
    assert run.status is RunStatus.SUCCEEDED
    assert run.depth == 1
    assert current_depth() == 0


async def test_a_run_deeper_than_the_limit_is_refused_before_it_is_recorded() -> None:
    engine = Engine(max_depth=0)
    with pytest.raises(InvalidInput):
        await engine.run(graph([start(), end(out="x")], "start>end"))
    assert engine.store.runs == {}


async def test_the_run_adds_up_the_tokens_and_price_of_its_nodes() -> None:
    engine = Engine(work={NodeType.LLM: Priced()})
    flow = graph([start(), node("a", LLM), node("b", LLM), end(out="x")], "start>a", "a>b", "b>end")
    run = await engine.run(flow)
    assert (run.spent.tokens, run.spent.price) == (20, pytest.approx(0.002))
    assert [n.spent.tokens for n in engine.store.only().nodes if n.status is NodeStatus.SUCCEEDED] == [0, 10, 10, 0]


class Priced:
    async def __call__(self, node: Node, scope: Mapping[str, Any], context: RunContext) -> NodeResult:
        return NodeResult({"text": node.id}, spent=Spent(10, 0.001))
