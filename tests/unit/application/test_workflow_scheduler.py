"""The DAG scheduler: independent nodes start together, a node waits for all its predecessors, only
the branch an if_else chose runs (the rest is recorded skipped), retries and `on_error`, and
iterations with bounded parallelism."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from application.errors import NodeFailed
from domain.workflows.graph import ErrorAction, NodeType
from domain.workflows.runs import NodeStatus, RunStatus
from tests.fake_workflows import end, finished, graph, node, start
from tests.unit.application.workflow_engine import Engine, both_started

if TYPE_CHECKING:
    from collections.abc import Mapping

    from application.workflows.node_work import RunContext

LLM = NodeType.LLM
CITY = {"name": "city", "type": "string"}


async def test_nodes_that_do_not_depend_on_each_other_run_side_by_side() -> None:
    engine = Engine()
    gate: dict[str, Any] = {"expected": 2}

    def slow(name: str) -> Any:
        async def script(scope: Mapping[str, Any], context: RunContext) -> Mapping[str, Any]:
            await both_started(gate, name)  # a scheduler that ran one after the other would wait here forever
            return {"text": name}
        return script

    engine.script("a", slow("a"))
    engine.script("b", slow("b"))
    flow = graph([start(), node("a", LLM), node("b", LLM), end(a="{{ a.text }}", b="{{ b.text }}")],
                 "start>a", "start>b", "a>end", "b>end")
    async with asyncio.timeout(5):
        run = await engine.run(flow)
    assert run.status is RunStatus.SUCCEEDED
    assert dict(run.outputs) == {"a": "a", "b": "b"}
    names = engine.event_names()
    assert names.index("node_started:b") < names.index("node_finished:a")


async def test_a_node_starts_once_all_its_predecessors_finished_and_reads_their_outputs() -> None:
    engine = Engine()
    engine.returns("a", text="left")
    engine.returns("b", text="right")
    flow = graph([start(CITY), node("a", LLM), node("b", LLM),
                  node("join", template="{{ start.city }}: {{ a.text }}+{{ b.text }}"), end(out="{{ join.output }}")],
                 "start>a", "start>b", "a>join", "b>join", "join>end")
    run = await engine.run(flow, city="Paris")
    assert dict(run.outputs) == {"out": "Paris: left+right"}
    names = engine.event_names()
    assert names.index("node_started:join") > max(names.index("node_finished:a"), names.index("node_finished:b"))
    assert engine.event_names()[0] == "workflow_started"
    assert names[-1] == "workflow_finished"


async def test_only_the_chosen_branch_runs_and_the_others_are_recorded_skipped() -> None:
    engine = Engine()
    for name in ("hot", "cold", "after_cold"):
        engine.returns(name, text=name)
    flow = graph(
        [start({"name": "t", "type": "number"}),
         node("check", NodeType.IF_ELSE, cases=[{"id": "warm", "when": "start.t > 20"}]),
         node("hot", LLM), node("cold", LLM), node("after_cold", LLM),
         node("merge", template="{{ start.t }}"), end(out="{{ merge.output }}")],
        "start>check", "check>hot:warm", "check>cold:else", "cold>after_cold", "hot>merge", "after_cold>merge",
        "merge>end",
    )
    run = await engine.run(flow, t=30)
    assert run.status is RunStatus.SUCCEEDED
    recorded = engine.store.only()
    assert finished(recorded) == {
        "start": "succeeded", "check": "succeeded", "hot": "succeeded", "cold": "skipped", "after_cold": "skipped",
        "merge": "succeeded", "end": "succeeded",
    }
    assert engine.scripted.calls == ["hot"]
    [check] = [n for n in recorded.nodes if n.node_id == "check"]
    assert dict(check.outputs) == {"branch": "warm"}


async def test_else_is_taken_when_no_case_holds() -> None:
    engine = Engine()
    engine.returns("hot", text="hot")
    engine.returns("cold", text="cold")
    flow = graph([start({"name": "t", "type": "number"}),
                  node("check", NodeType.IF_ELSE, cases=[{"id": "warm", "when": "{{ start.t > 20 }}"}]),
                  node("hot", LLM), node("cold", LLM), end(out="done")],
                 "start>check", "check>hot:warm", "check>cold:else", "hot>end", "cold>end")
    await engine.run(flow, t=3)
    assert engine.scripted.calls == ["cold"]
    assert finished(engine.store.only())["hot"] == "skipped"


def failing_until(attempts: int, outputs: Mapping[str, Any]) -> Any:
    tries: list[int] = []

    async def script(scope: Mapping[str, Any], context: RunContext) -> Mapping[str, Any]:
        tries.append(1)
        if len(tries) < attempts:
            raise NodeFailed(f"try {len(tries)} failed")
        return outputs
    return script


async def test_a_node_tried_again_succeeds_on_its_third_try_after_doubling_waits() -> None:
    engine = Engine()
    engine.script("flaky", failing_until(3, {"text": "at last"}))
    flow = graph([start(), node("flaky", LLM, retry=2, backoff=0.5), end(out="{{ flaky.text }}")],
                 "start>flaky", "flaky>end")
    run = await engine.run(flow)
    assert run.status is RunStatus.SUCCEEDED
    assert dict(run.outputs) == {"out": "at last"}
    [flaky] = [n for n in engine.store.only().nodes if n.node_id == "flaky"]
    assert (flaky.status, flaky.attempt) == (NodeStatus.SUCCEEDED, 3)
    assert engine.sleep.waits == [0.5, 1.0]


async def test_a_node_out_of_tries_fails_the_run_and_stops_the_nodes_still_running() -> None:
    engine = Engine()
    engine.script("bad", failing_until(99, {}))
    never = asyncio.Event()

    async def waits(scope: Mapping[str, Any], context: RunContext) -> Mapping[str, Any]:
        await never.wait()
        return {}

    engine.script("slow", waits)
    flow = graph([start(), node("bad", LLM, retry=1), node("slow", LLM), end(out="x")],
                 "start>bad", "start>slow", "bad>end", "slow>end")
    run = await engine.run(flow)
    assert run.status is RunStatus.FAILED
    assert run.error == "node bad failed: try 2 failed"
    recorded = engine.store.only()
    assert finished(recorded) == {"start": "succeeded", "bad": "failed", "slow": "stopped"}
    [bad] = [n for n in recorded.nodes if n.node_id == "bad"]
    assert bad.attempt == 2


async def test_on_error_default_gives_the_node_its_value_and_the_run_goes_on() -> None:
    engine = Engine()
    engine.script("bad", failing_until(99, {}))
    flow = graph([start(), node("bad", LLM, on_error=ErrorAction.DEFAULT, value={"text": "fallback"}),
                  end(out="{{ bad.text }}")], "start>bad", "bad>end")
    run = await engine.run(flow)
    assert run.status is RunStatus.SUCCEEDED
    assert dict(run.outputs) == {"out": "fallback"}
    [bad] = [n for n in engine.store.only().nodes if n.node_id == "bad"]
    assert (bad.status, dict(bad.outputs), bad.error) == (NodeStatus.FAILED, {"text": "fallback"}, "try 1 failed")


async def test_on_error_branch_follows_the_error_edge_and_skips_the_others() -> None:
    engine = Engine()
    engine.script("bad", failing_until(99, {}))
    engine.returns("fine", text="unused")
    flow = graph([start(), node("bad", LLM, on_error=ErrorAction.BRANCH), node("fine", LLM),
                  node("apology", template="sorry: {{ bad.error }}"), end(out="{{ apology.output }}")],
                 "start>bad", "bad>fine", "bad>apology:error", "fine>end", "apology>end")
    run = await engine.run(flow)
    assert run.status is RunStatus.SUCCEEDED
    assert dict(run.outputs) == {"out": "sorry: try 1 failed"}
    assert finished(engine.store.only())["fine"] == "skipped"
    assert engine.scripted.calls == ["bad"]


async def test_a_node_that_succeeds_never_takes_its_error_edge() -> None:
    engine = Engine()
    engine.returns("ok", text="fine")
    flow = graph([start(), node("ok", LLM, on_error=ErrorAction.BRANCH), node("apology", template="sorry"),
                  end(out="{{ ok.text }}")], "start>ok", "ok>end", "ok>apology:error", "apology>end")
    run = await engine.run(flow)
    assert dict(run.outputs) == {"out": "fine"}
    assert finished(engine.store.only())["apology"] == "skipped"


async def test_a_failing_template_fails_the_run_whatever_it_would_retry() -> None:
    engine = Engine()
    flow = graph([start(), node("t", template="{{ nowhere.x }}"), end(out="x")], "start>t", "t>end")
    run = await engine.run(flow)
    assert run.status is RunStatus.FAILED
    assert run.error is not None
    assert run.error.startswith("node t failed:")


async def test_an_iteration_runs_its_body_per_item_at_most_parallelism_at_once_in_order() -> None:
    engine = Engine()
    active: list[int] = [0, 0]  # now, most at once

    async def body(scope: Mapping[str, Any], context: RunContext) -> Mapping[str, Any]:
        active[0] += 1
        active[1] = max(active)
        for _ in range(5):  # let the other items run meanwhile
            await asyncio.sleep(0)
        active[0] -= 1
        return {"text": f"{scope['index']}:{scope['item']}"}

    engine.script("b1", body)
    inner = graph([node("b1", LLM), end(text="{{ b1.text }}", item="{{ item }}")], "b1>end")
    flow = graph([start({"name": "words", "type": "array"}),
                  node("loop", NodeType.ITERATION, items="start.words", body=inner, parallelism=2),
                  end(all="{{ loop.outputs }}")], "start>loop", "loop>end")
    run = await engine.run(flow, words=["a", "b", "c", "d", "e"])
    assert run.status is RunStatus.SUCCEEDED
    assert [o["text"] for o in run.outputs["all"]] == ["0:a", "1:b", "2:c", "3:d", "4:e"]
    assert active[1] == 2


async def test_an_item_that_fails_fails_the_iteration() -> None:
    engine = Engine()

    async def body(scope: Mapping[str, Any], context: RunContext) -> Mapping[str, Any]:
        if scope["item"] == "bad":
            raise NodeFailed("no")
        return {"text": "ok"}

    engine.script("b1", body)
    inner = graph([node("b1", LLM), end(text="{{ b1.text }}")], "b1>end")
    flow = graph([start({"name": "words", "type": "array"}),
                  node("loop", NodeType.ITERATION, items="start.words", body=inner), end(out="x")],
                 "start>loop", "loop>end")
    run = await engine.run(flow, words=["ok", "bad"])
    assert run.status is RunStatus.FAILED
    assert run.error == "node loop failed: item 1: node b1 failed: no"
