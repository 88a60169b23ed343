"""A published workflow version as an agent's tool, through `memagent serve` on the OpenAI-protocol test
server: the run's events inside the turn's own stream, the answer made from its outputs, the run's
record pointing at the turn's message and step; a stop of the turn during the run (the run is
`stopped`); `return_direct` (the outputs are the answer, no second model call); and a publish that
pins a version that does not exist."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from tests.e2e.test_keys_and_owners import Key, create_key
from tests.integration.http_answers import ok
from tests.integration.streaming_helpers import open_sse, serving, wait_until
from tests.llm_server import ScriptedLLMServer
from tests.llm_server_scripts import ToolCallsScript, call, text
from tests.service import Service
from tests.workflow_graphs import SIMPLE, simple

pytestmark = pytest.mark.integration

MARK = "You are the workflow tools' test agent."
WORKFLOW_EVENTS = ("workflow_started", "node_started", "node_finished", "workflow_finished")


@dataclass(frozen=True)
class World:
    service: Service
    llm: ScriptedLLMServer
    alice: Key
    slow_url: str


class _Slow(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        time.sleep(20)
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    folder = tmp_path_factory.mktemp("workflow-tools")
    db_url = f"sqlite+aiosqlite:///{folder / 'memagent.db'}"
    alice = create_key(db_url, "alice")
    slow = ThreadingHTTPServer(("127.0.0.1", 0), _Slow)
    slow.daemon_threads = True
    threading.Thread(target=slow.serve_forever, daemon=True).start()
    with ScriptedLLMServer() as llm:
        env = {
            "MEMAGENT_DATABASE__URL": db_url, "MEMAGENT_AUTH__REQUIRE_KEYS": "true",
            "MEMAGENT_LLM__PROVIDER": "openai", "MEMAGENT_LLM__BASE_URL": llm.base_url,
            "MEMAGENT_LLM__API_KEY": "sk-workflows-0123", "MEMAGENT_LLM__MODEL": "scripted-model",
            "MEMAGENT_LLM__MAX_RETRIES": "0", "MEMAGENT_LLM__CAPABILITIES__TOOL_CALL": "true",
            "MEMAGENT_EMBEDDINGS__BACKEND": "openai", "MEMAGENT_TURN__STOP_CHECK_INTERVAL": "0.05",
            "MEMAGENT_WORKFLOWS__ALLOW_PRIVATE_NETWORKS": "true",
        }
        with serving(env, folder) as service:
            yield World(service, llm, alice, f"http://127.0.0.1:{slow.server_address[1]}/")
    slow.shutdown()


@pytest.fixture
def http(world: World) -> Iterator[httpx.Client]:
    world.llm.reset()
    # The turn's own calls get the queued scripts; a title or the upkeep, the test server's echo.
    world.llm.answer_aside(lambda body: MARK not in str((body.get("messages") or [{}])[0].get("content")))
    with httpx.Client(base_url=world.service.base_url, timeout=30, headers=world.alice.headers) as client:
        yield client


def published_workflow(http: httpx.Client, name: str, graph: dict[str, Any]) -> str:
    made = ok(http.post("/api/workflows", json={"name": name, "description": "Greets a city.", "graph": graph}),
              201)
    ok(http.post(f"/api/workflows/{made['id']}/publish", json={"note": "v1"}), 201)
    return str(made["id"])


def agent_with(http: httpx.Client, name: str, workflows: list[dict[str, Any]]) -> str:
    config = {"preset_prompt": MARK, "workflows": workflows, "memory": {"summary": False, "entities": False}}
    agent = str(ok(http.post("/api/agents", json={"name": name, "config": config}), 201)["id"])
    ok(http.post(f"/api/agents/{agent}/publish", json={}), 201)
    return agent


def streamed(http: httpx.Client, agent: str, query: str) -> list[dict[str, Any]]:
    with open_sse(http, "POST", "/api/chat", json={"query": query, "stream": True, "agent_id": agent}) as stream:
        stream.rest()
    return [f.data for f in stream.frames if f.id is not None]


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
    run_id = runs[0]["workflow"]["workflow_run_id"]
    assert runs[-1]["workflow"] == runs[-1]["workflow"] | {"status": "succeeded", "outputs": {"text": "Hello Baku"}}
    # The model's second call saw the end outputs as the tool's result, and the answer is made from them.
    seen = json.dumps(world.llm.scripted_requests[1].messages)
    assert json.dumps(json.dumps({"text": "Hello Baku"}))[1:-1] in seen
    assert events[-1]["event"] == "agent_end"
    assert events[-1]["answer"] == "It says: Hello Baku."
    record = ok(http.get(f"/api/workflow-runs/{run_id}"))
    assert (record["parent_message_id"], record["parent_step_id"]) == (events[0]["message_id"], step["id"])
    assert record["status"] == "succeeded"


def test_a_stop_of_the_turn_during_the_workflow_stops_the_run(http: httpx.Client, world: World) -> None:
    slow = simple(nodes=[
        SIMPLE["nodes"][0],
        {"id": "greet", "type": "http_request", "method": "GET", "url": world.slow_url, "timeout": 30},
        {"id": "end", "type": "end", "outputs": {"text": "{{ greet.status }}"}},
    ])
    workflow = published_workflow(http, "slow_greeter", slow)
    agent = agent_with(http, "Slow", [{"id": workflow, "version": 1}])
    world.llm.enqueue(ToolCallsScript([call("slow_greeter", {"city": "Baku"})]), text("never"))

    body = {"query": "Greet slowly", "stream": True, "agent_id": agent}
    with open_sse(http, "POST", "/api/chat", json=body) as stream:
        started = stream.until_event("workflow_started")
        time.sleep(0.3)  # the http_request node is waiting on the slow server
        ok(http.post(f"/api/tasks/{started.data['task_id']}/stop"))
        stream.rest()
    assert stream.frames[-2].data["event"] == "stop"
    record = f"/api/workflow-runs/{started.data['workflow']['workflow_run_id']}"
    assert wait_until(lambda: ok(http.get(record))["status"] == "stopped" or None, 10, "the run recorded stopped")


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
