"""A published workflow version as an agent's tool, through `memagent serve` on the OpenAI-protocol test
server, on SQLite and on PostgreSQL with Redis (the event log and the task control on Redis): the run's
events inside the turn's own stream, the answer made from its outputs, the run's record pointing at the
turn's message and step; a stop of the turn during the run (the run is `stopped`); a node that fails
once then succeeds on its retry; a node's `default` on error; a `code` node's escape refused;
`return_direct` (the outputs are the answer, no second model call); a publish that pins a version that
does not exist; and the same tool through `/v1/chat/completions` with the openai SDK."""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from tests.integration.http_answers import ok
from tests.integration.streaming_helpers import open_sse, wait_until
from tests.integration.workflow_tools_world import (
    MARK,
    World,
    agent_with,
    local_site,
    published_workflow,
    run_of,
    streamed,
    world_on,
)
from tests.llm_server import ScriptedLLMServer
from tests.llm_server_scripts import ToolCallsScript, call, text
from tests.workflow_graphs import SIMPLE, simple

pytestmark = pytest.mark.integration

WORKFLOW_EVENTS = ("workflow_started", "node_started", "node_finished", "workflow_finished")


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    folder = tmp_path_factory.mktemp(f"workflow-tools-{request.param}")
    with local_site() as site, ScriptedLLMServer() as llm, world_on(request.param, folder, llm, site) as served:
        yield served


@pytest.fixture
def http(world: World) -> Iterator[httpx.Client]:
    world.llm.reset()
    # The turn's own calls get the queued scripts; a title or the upkeep, the test server's echo.
    world.llm.answer_aside(lambda body: MARK not in str((body.get("messages") or [{}])[0].get("content")))
    with httpx.Client(base_url=world.service.base_url, timeout=30, headers=world.alice.headers) as client:
        yield client


def with_node(node: dict[str, Any], outputs: dict[str, str]) -> dict[str, Any]:
    """SIMPLE with `node` in place of its `greet` node, and an end giving `outputs`."""
    return simple(nodes=[SIMPLE["nodes"][0], {"id": "greet"} | node, {"id": "end", "type": "end", "outputs": outputs}])


def tool_result_seen(world: World) -> str:
    """What the model's second call of the turn was sent, as JSON: the tool's result is in it."""
    return json.dumps(world.llm.scripted_requests[1].messages)


def test_a_pinned_workflow_runs_as_a_tool_inside_a_streamed_turn(http: httpx.Client, world: World) -> None:
    workflow = published_workflow(http, "greeter", SIMPLE)
    agent = agent_with(http, "Greeter", [{"id": workflow, "version": 1}])
    world.llm.enqueue(ToolCallsScript([call("greeter", {"city": "Baku"})]), text("It says: Hello Baku."))

    events = streamed(http, agent, "Greet Baku")

    offered = world.llm.scripted_requests[0].tools
    assert [t["function"]["name"] for t in offered] == ["greeter"]
    assert offered[0]["function"]["description"] == "Greets a city."
    assert offered[0]["function"]["parameters"]["properties"]["city"]["type"] == "string"
    step = next(e for e in events if e["event"] == "agent_thought")
    runs = [e for e in events if e["event"] in WORKFLOW_EVENTS]
    assert [e["event"] for e in runs][0] == "workflow_started"
    assert runs[-1]["event"] == "workflow_finished"
    assert {"node_started", "node_finished"} <= {e["event"] for e in runs}
    assert {e["id"] for e in runs} == {step["id"]}
    assert {e["tool"] for e in runs} == {"greeter"}
    assert runs[-1]["workflow"] == runs[-1]["workflow"] | {"status": "succeeded", "outputs": {"text": "Hello Baku"}}
    # The model's second call saw the end outputs as the tool's result, and the answer is made from them.
    assert json.dumps(json.dumps({"text": "Hello Baku"}))[1:-1] in tool_result_seen(world)
    assert events[-1]["event"] == "agent_end"
    assert events[-1]["answer"] == "It says: Hello Baku."
    record = ok(http.get(f"/api/workflow-runs/{run_of(events)}"))
    assert (record["parent_message_id"], record["parent_step_id"]) == (events[0]["message_id"], step["id"])
    assert record["status"] == "succeeded"


def test_a_stop_of_the_turn_during_the_workflow_stops_the_run(http: httpx.Client, world: World) -> None:
    slow = with_node({"type": "http_request", "method": "GET", "url": f"{world.site.url}slow", "timeout": 30},
                     {"text": "{{ greet.status }}"})
    workflow = published_workflow(http, "slow_greeter", slow)
    agent = agent_with(http, "Slow", [{"id": workflow, "version": 1}])
    world.llm.enqueue(ToolCallsScript([call("slow_greeter", {"city": "Baku"})]), text("never"))

    body = {"query": "Greet slowly", "stream": True, "agent_id": agent}
    with open_sse(http, "POST", "/api/chat", json=body) as stream:
        started = stream.until_event("workflow_started")
        stream.until(lambda f: f.event == "node_started" and f.data["workflow"]["node_id"] == "greet")
        time.sleep(0.3)  # the http_request node is waiting on the slow server
        ok(http.post(f"/api/tasks/{started.data['task_id']}/stop"))
        stream.rest()
    assert stream.frames[-2].data["event"] == "stop"
    record = f"/api/workflow-runs/{started.data['workflow']['workflow_run_id']}"
    assert wait_until(lambda: ok(http.get(record))["status"] == "stopped" or None, 10, "the run recorded stopped")
    greet = next(n for n in ok(http.get(record))["nodes"] if n["node_id"] == "greet")
    assert greet["status"] == "stopped"


def test_a_node_that_fails_once_succeeds_on_its_retry(http: httpx.Client, world: World) -> None:
    path = f"/flaky/{secrets.token_hex(4)}"  # dropped the first time, answered the second
    flaky = with_node({"type": "http_request", "method": "GET", "url": f"{world.site.url}{path[1:]}", "timeout": 5,
                       "retry": {"count": 2, "backoff": 0.1}}, {"text": "{{ greet.status }} {{ greet.json.ok }}"})
    workflow = published_workflow(http, "flaky_greeter", flaky)
    agent = agent_with(http, "Flaky", [{"id": workflow, "version": 1}])
    world.llm.enqueue(ToolCallsScript([call("flaky_greeter", {"city": "Baku"})]), text("It answered."))

    events = streamed(http, agent, "Try it")

    assert events[-1]["event"] == "agent_end"
    record = ok(http.get(f"/api/workflow-runs/{run_of(events)}"))
    assert (record["status"], record["outputs"]) == ("succeeded", {"text": "200 True"})
    greet = next(n for n in record["nodes"] if n["node_id"] == "greet")
    assert (greet["status"], greet["attempt"], greet["error"]) == ("succeeded", 2, None)
    assert world.site.hits(path) == 2
    assert json.dumps(json.dumps({"text": "200 True"}))[1:-1] in tool_result_seen(world)


def test_a_failing_node_with_a_default_gives_its_value_and_the_run_succeeds(http: httpx.Client, world: World) -> None:
    path = f"/drop/{secrets.token_hex(4)}"
    offline = {"status": 0, "body": "offline", "json": None}
    dropped = with_node({"type": "http_request", "method": "GET", "url": f"{world.site.url}{path[1:]}", "timeout": 5,
                         "on_error": {"action": "default", "value": offline}}, {"text": "{{ greet.body }}"})
    workflow = published_workflow(http, "offline_greeter", dropped)
    agent = agent_with(http, "Offline", [{"id": workflow, "version": 1}])
    world.llm.enqueue(ToolCallsScript([call("offline_greeter", {"city": "Baku"})]), text("It is offline."))

    events = streamed(http, agent, "Try it")

    assert events[-1]["event"] == "agent_end"
    finished = next(e for e in events if e["event"] == "workflow_finished")["workflow"]
    assert (finished["status"], finished["outputs"]) == ("succeeded", {"text": "offline"})
    record = ok(http.get(f"/api/workflow-runs/{run_of(events)}"))
    assert (record["status"], record["error"]) == ("succeeded", None)
    greet = next(n for n in record["nodes"] if n["node_id"] == "greet")
    assert (greet["status"], greet["outputs"]) == ("failed", offline)
    assert "127.0.0.1" in greet["error"]
    assert "failed" in greet["error"]
    assert world.site.hits(path) == 1  # no retry asked, none made


# Both compile under RestrictedPython: the sandbox refuses them as they run.
ESCAPES = {
    "opens": "def main(path):\n    with open(path, 'w') as f:\n        f.write('out')\n    return {'wrote': True}\n",
    "imports": "def main(path):\n    import os\n    os.system('echo out > ' + path)\n    return {}\n",
}


def test_a_code_node_that_reaches_for_a_file_or_os_is_refused_and_nothing_escapes(
    http: httpx.Client, world: World, tmp_path: Path
) -> None:
    target = tmp_path / "escaped.txt"
    graph = {
        "nodes": [
            {"id": "start", "type": "start", "inputs": [{"name": "path", "type": "string"}]},
            {"id": "opens", "type": "code", "code": ESCAPES["opens"], "inputs": {"path": "start.path"},
             "on_error": {"action": "default", "value": {"wrote": False}}},
            {"id": "imports", "type": "code", "code": ESCAPES["imports"], "inputs": {"path": "start.path"}},
            {"id": "end", "type": "end", "outputs": {"wrote": "{{ opens.wrote }}"}},
        ],
        "edges": [{"source": "start", "target": "opens"}, {"source": "opens", "target": "imports"},
                  {"source": "imports", "target": "end"}],
    }
    workflow = published_workflow(http, "escaper", graph)
    agent = agent_with(http, "Escaper", [{"id": workflow, "version": 1}])
    world.llm.enqueue(ToolCallsScript([call("escaper", {"path": str(target)})]), text("It was refused."))

    events = streamed(http, agent, "Escape")

    assert events[-1]["event"] == "agent_end"
    assert events[-1]["answer"] == "It was refused."
    record = ok(http.get(f"/api/workflow-runs/{run_of(events)}"))
    nodes = {n["node_id"]: n for n in record["nodes"]}
    assert (nodes["opens"]["status"], nodes["opens"]["outputs"]) == ("failed", {"wrote": False})
    assert "`open` is not allowed" in nodes["opens"]["error"]
    assert nodes["imports"]["status"] == "failed"
    assert "`import os` is not allowed" in nodes["imports"]["error"]
    assert "end" not in nodes
    assert record["status"] == "failed"
    assert nodes["imports"]["error"] in record["error"]
    # The model was told why the tool failed, and nothing was written outside the sandbox.
    assert "`import os` is not allowed" in tool_result_seen(world)
    assert not target.exists()


def test_code_the_sandbox_refuses_to_compile_is_refused_when_the_workflow_is_saved(http: httpx.Client) -> None:
    graph = with_node({"type": "code", "code": "def main():\n    return {'pid': __import__('os').getpid()}\n",
                       "inputs": {}}, {"text": "{{ greet.pid }}"})
    answer = http.post("/api/workflows", json={"name": "unrunnable", "graph": graph})
    assert answer.status_code == 422, answer.text
    assert answer.json()["code"] == "invalid_workflow"
    assert [p["path"] for p in answer.json()["problems"]] == ["nodes[1].code"]


def test_return_direct_makes_the_outputs_the_answer_without_another_model_call(
    http: httpx.Client, world: World
) -> None:
    workflow = published_workflow(http, "direct_greeter", SIMPLE)
    agent = agent_with(http, "Direct", [{"id": workflow, "version": 1, "return_direct": True}])
    world.llm.enqueue(ToolCallsScript([call("direct_greeter", {"city": "Oslo"})]), text("not this"))

    events = streamed(http, agent, "Greet Oslo")

    assert events[-1]["event"] == "agent_end"
    assert events[-1]["answer"] == "Hello Oslo"
    assert len(world.llm.scripted_requests) == 1


def test_an_agent_cannot_be_published_pinning_a_version_that_does_not_exist(http: httpx.Client) -> None:
    workflow = published_workflow(http, "only_one", SIMPLE)
    config = {"workflows": [{"id": workflow, "version": 2}]}
    agent = ok(http.post("/api/agents", json={"name": "Pinned", "config": config}), 201)["id"]
    refused = http.post(f"/api/agents/{agent}/publish", json={})
    assert refused.status_code == 422
    assert f"workflows[0]: no version 2 of a workflow {workflow!r} of yours" in refused.text


def test_an_agent_reached_through_v1_runs_its_workflow_and_answers_from_its_outputs(
    http: httpx.Client, world: World
) -> None:
    workflow = published_workflow(http, "v1_greeter", SIMPLE)
    agent = agent_with(http, "OpenGreeter", [{"id": workflow, "version": 1}])
    world.llm.enqueue(ToolCallsScript([call("v1_greeter", {"city": "Lima"})]), text("It says: Hello Lima."))
    sdk = openai.OpenAI(base_url=f"{world.service.base_url}/v1", api_key=world.alice.raw, max_retries=0, timeout=30)

    raw = sdk.chat.completions.with_raw_response.create(
        model=agent, messages=[{"role": "user", "content": "Greet Lima"}])

    completion = raw.parse()
    assert completion.choices[0].message.content == "It says: Hello Lima."
    assert [t["function"]["name"] for t in world.llm.scripted_requests[0].tools] == ["v1_greeter"]
    assert json.dumps(json.dumps({"text": "Hello Lima"}))[1:-1] in tool_result_seen(world)
    steps = ok(http.get(f"/api/messages/{raw.headers['x-memagent-message-id']}/thoughts"))["data"]
    step = next(s for s in steps if s["event"] == "agent_thought")
    assert (step["tool"], json.loads(step["observation"])) == ("v1_greeter", {"v1_greeter": '{"text": "Hello Lima"}'})
