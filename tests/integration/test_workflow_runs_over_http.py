"""Running workflows over real HTTP (keys required), on SQLite and on PostgreSQL with Redis: the
latest version, a given one or the draft; the answer at the end or SSE frames as the run goes; 422
naming each input wrong; the run's record with its nodes, for its owner and end user only; a
streamed run that outlives its client, resumed after the last id it saw, stopped on request, and
stopped once no client has followed it for the grace period."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from tests.e2e.test_keys_and_owners import Key
from tests.integration.http_answers import ok, refused
from tests.integration.two_accounts import two_accounts
from tests.service import Service
from tests.workflow_graphs import SIMPLE, simple

pytestmark = pytest.mark.integration

SLOW_SECONDS = 20  # the slow server's answer, unless a request asks for `?seconds=`
CLIENT_GRACE = 3  # MEMAGENT_WORKFLOWS__CLIENT_GRACE: a streamed run goes on this long without a client


@dataclass(frozen=True)
class World:
    service: Service
    alice: Key
    bob: Key
    slow_url: str


class _Slow(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        asked = parse_qs(urlsplit(self.path).query).get("seconds")
        time.sleep(float(asked[0]) if asked else SLOW_SECONDS)
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def slow_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Slow)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, slow_url: str) -> Iterator[World]:
    folder = tmp_path_factory.mktemp(f"workflow-runs-{request.param}")
    settings = {
        "MEMAGENT_WORKFLOWS__ALLOW_PRIVATE_NETWORKS": "true",  # the slow server is on loopback
        "MEMAGENT_WORKFLOWS__CLIENT_GRACE": str(CLIENT_GRACE),
    }
    with two_accounts(request.param, folder, settings) as served:
        yield World(served.service, served.alice, served.bob, slow_url)


@pytest.fixture
def http(world: World) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=world.service.base_url, timeout=30, headers=world.alice.headers) as client:
        yield client


def published(http: httpx.Client, name: str, graph: dict[str, Any] = SIMPLE) -> str:
    made = ok(http.post("/api/workflows", json={"name": name, "graph": graph}), 201)
    ok(http.post(f"/api/workflows/{made['id']}/publish"), 201)
    return str(made["id"])


def frames(response: httpx.Response) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(event, id, data) of each SSE frame, as they come."""
    fields: dict[str, str] = {}
    for line in response.iter_lines():
        if line:
            name, _, value = line.partition(": ")
            fields[name] = value
        elif "data" in fields:
            yield fields.get("event", ""), fields.get("id", ""), json.loads(fields["data"])
            fields = {}


def test_a_run_of_the_latest_version_answers_its_outputs_and_its_record_lists_the_nodes_in_order(
    http: httpx.Client,
) -> None:
    workflow_id = published(http, "greet_latest")

    answer = ok(http.post(f"/api/workflows/{workflow_id}/run", json={"inputs": {"city": "Paris"}}))

    assert (answer["status"], answer["outputs"], answer["error"]) == ("succeeded", {"text": "Hello Paris"}, None)
    record = ok(http.get(f"/api/workflow-runs/{answer['run_id']}"))
    assert (record["workflow_id"], record["version"], record["inputs"]) == (workflow_id, 1, {"city": "Paris"})
    assert [n["node_id"] for n in record["nodes"]] == ["start", "greet", "end"]
    assert record["nodes"][1]["outputs"] == {"output": "Hello Paris"}
    assert all(n["status"] == "succeeded" for n in record["nodes"])


def test_the_draft_runs_on_request_a_missing_version_is_404_and_no_version_yet_is_409(http: httpx.Client) -> None:
    made = ok(http.post("/api/workflows", json={"name": "greet_draft", "graph": SIMPLE}), 201)
    run = f"/api/workflows/{made['id']}/run"

    refused(http.post(run, json={"inputs": {"city": "Rome"}}), 409, "not_published")
    answer = ok(http.post(run, json={"inputs": {"city": "Rome"}, "draft": True}))
    assert answer["outputs"] == {"text": "Hello Rome"}
    assert ok(http.get(f"/api/workflow-runs/{answer['run_id']}"))["version"] is None
    ok(http.post(f"/api/workflows/{made['id']}/publish"), 201)
    refused(http.post(run, json={"inputs": {"city": "Rome"}, "version": 2}), 404, "not_found")
    assert ok(http.post(run, json={"inputs": {"city": "Rome"}, "version": 1}))["status"] == "succeeded"


def test_missing_mistyped_and_unknown_inputs_are_422_naming_each(http: httpx.Client) -> None:
    workflow_id = published(http, "greet_inputs")
    run = f"/api/workflows/{workflow_id}/run"

    missing = http.post(run, json={"inputs": {"town": "Paris"}})
    mistyped = http.post(run, json={"inputs": {"city": 3}, "stream": True})

    assert missing.status_code == 422, missing.text
    assert {p["path"] for p in missing.json()["problems"]} == {"inputs.city", "inputs.town"}
    assert mistyped.status_code == 422, mistyped.text
    assert [p["path"] for p in mistyped.json()["problems"]] == ["inputs.city"]


def test_a_streamed_run_sends_each_event_with_an_id_then_done(http: httpx.Client) -> None:
    workflow_id = published(http, "greet_stream")

    with http.stream("POST", f"/api/workflows/{workflow_id}/run",
                     json={"inputs": {"city": "Oslo"}, "stream": True}) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        sent = list(frames(response))

    assert [event for event, _, _ in sent] == [
        "workflow_started", *["node_started", "node_finished"] * 3, "workflow_finished", "done",
    ]
    assert [int(frame_id) for _, frame_id, _ in sent] == list(range(1, 10))
    greet = sent[4][2]
    assert (greet["node_id"], greet["status"], greet["outputs"]) == ("greet", "succeeded", {"output": "Hello Oslo"})
    assert greet["latency"] >= 0
    run_id = sent[0][2]["workflow_run_id"]
    assert sent[7][2]["outputs"] == {"text": "Hello Oslo"}
    assert sent[8][2] == {"workflow_run_id": run_id}
    assert ok(http.get(f"/api/workflow-runs/{run_id}"))["status"] == "succeeded"


def test_a_run_is_its_owners_and_its_end_users_only(http: httpx.Client, world: World) -> None:
    workflow_id = published(http, "greet_owned")
    run = ok(http.post(f"/api/workflows/{workflow_id}/run", json={"inputs": {"city": "Lima"}, "user": "ann"}))
    record = f"/api/workflow-runs/{run['run_id']}"

    assert ok(http.get(record, params={"user": "ann"}))["end_user"] == "ann"
    assert ok(http.get(record))["run_id"] == run["run_id"]  # the account sees all its end users' runs
    refused(http.get(record, params={"user": "ben"}), 404, "not_found")
    refused(http.get(record, headers=world.bob.headers), 404, "not_found")
    refused(http.post(f"/api/workflows/{workflow_id}/run", json={"inputs": {"city": "Lima"}},
                      headers=world.bob.headers), 404, "not_found")


def slow_workflow(http: httpx.Client, world: World, name: str, seconds: float | None = None) -> str:
    """A published workflow whose `greet` node waits for the slow server (`seconds`, else SLOW_SECONDS)."""
    url = world.slow_url if seconds is None else f"{world.slow_url}?seconds={seconds}"
    return published(http, name, simple(nodes=[
        SIMPLE["nodes"][0],
        {"id": "greet", "type": "http_request", "method": "GET", "url": url, "timeout": 30},
        {"id": "end", "type": "end", "outputs": {"text": "{{ greet.status }}"}},
    ]))


def until_greet_runs(response: httpx.Response) -> tuple[list[tuple[str, str, dict[str, Any]]], Iterator[Any]]:
    """The frames up to `greet`'s node_started (the run is then waiting on the slow server), and the rest."""
    sent = frames(response)
    first = [next(sent) for _ in range(4)]
    assert [(event, data.get("node_id")) for event, _, data in first] == [
        ("workflow_started", None), ("node_started", "start"), ("node_finished", "start"), ("node_started", "greet"),
    ]
    return first, sent


def test_a_client_that_disconnects_mid_run_resumes_after_its_last_id_and_gets_every_later_frame_once(
    http: httpx.Client, world: World,
) -> None:
    workflow_id = slow_workflow(http, world, "slow_resumed", seconds=2)

    with http.stream("POST", f"/api/workflows/{workflow_id}/run",
                     json={"inputs": {"city": "Baku"}, "stream": True}) as response:
        first, _ = until_greet_runs(response)
    # The connection is closed here, while greet still waits on the slow server.
    run_id = first[0][2]["workflow_run_id"]
    events = f"/api/workflow-runs/{run_id}/events"
    with http.stream("GET", events, headers={"Last-Event-ID": first[-1][1]}) as response:
        assert response.status_code == 200, response.read()
        rest = list(frames(response))

    assert [(event, data.get("node_id")) for event, _, data in rest] == [
        ("node_finished", "greet"), ("node_started", "end"), ("node_finished", "end"), ("workflow_finished", None),
        ("done", None),
    ]
    assert [int(frame_id) for _, frame_id, _ in first + rest] == list(range(1, 10))
    assert rest[3][2]["outputs"] == {"text": 200}
    with http.stream("GET", events, params={"last_event_id": "0"}) as response:
        assert list(frames(response)) == first + rest  # replayed, each frame is the one sent live
    assert http.get(events, headers={"Last-Event-ID": rest[-1][1]}).status_code == 204
    record = ok(http.get(f"/api/workflow-runs/{run_id}"))
    assert (record["workflow_id"], record["status"]) == (workflow_id, "succeeded")


def test_a_stop_mid_run_ends_its_stream_and_its_record_stopped_and_a_second_stop_is_409(
    http: httpx.Client, world: World,
) -> None:
    workflow_id = slow_workflow(http, world, "slow_stopped")

    with http.stream("POST", f"/api/workflows/{workflow_id}/run",
                     json={"inputs": {"city": "Baku"}, "stream": True}) as response:
        first, sent = until_greet_runs(response)
        run_id = first[0][2]["workflow_run_id"]
        stopped = ok(http.post(f"/api/workflow-runs/{run_id}/stop"))
        rest = list(sent)

    assert stopped == {"run_id": run_id, "result": "stopped", "status": "stopped"}
    assert [event for event, _, _ in rest][-2:] == ["workflow_finished", "done"]
    assert rest[-2][2]["status"] == "stopped"
    record = ok(http.get(f"/api/workflow-runs/{run_id}"))
    assert record["status"] == "stopped"
    assert {n["node_id"]: n["status"] for n in record["nodes"]}["greet"] == "stopped"
    again = refused(http.post(f"/api/workflow-runs/{run_id}/stop"), 409, "conflict")
    assert "'stopped'" in again
    assert http.get(f"/api/workflow-runs/{run_id}/events", headers={"Last-Event-ID": rest[-1][1]}).status_code == 204


def test_a_streamed_run_that_no_client_follows_for_the_grace_period_is_stopped(
    http: httpx.Client, world: World,
) -> None:
    workflow_id = slow_workflow(http, world, "slow_abandoned")

    with http.stream("POST", f"/api/workflows/{workflow_id}/run",
                     json={"inputs": {"city": "Baku"}, "stream": True}) as response:
        first, _ = until_greet_runs(response)
    # The connection is closed here, long before the slow server answers: the run goes on a while.
    record, left = f"/api/workflow-runs/{first[0][2]['workflow_run_id']}", time.monotonic()
    time.sleep(1)
    assert ok(http.get(record))["status"] == "running"
    while ok(http.get(record))["status"] == "running" and time.monotonic() < left + SLOW_SECONDS / 2:
        time.sleep(0.2)
    assert ok(http.get(record))["status"] == "stopped"


def test_another_accounts_or_end_users_run_cannot_be_followed_or_stopped_and_a_bad_last_event_id_is_400(
    http: httpx.Client, world: World,
) -> None:
    workflow_id = published(http, "greet_guarded")
    with http.stream("POST", f"/api/workflows/{workflow_id}/run",
                     json={"inputs": {"city": "Lima"}, "stream": True, "user": "ann"}) as response:
        run_id = next(frames(response))[2]["workflow_run_id"]
    events, stop = f"/api/workflow-runs/{run_id}/events", f"/api/workflow-runs/{run_id}/stop"

    refused(http.get(events, headers=world.bob.headers), 404, "not_found")
    refused(http.post(stop, headers=world.bob.headers), 404, "not_found")
    refused(http.get(events, params={"user": "ben"}), 404, "not_found")
    refused(http.post(stop, params={"user": "ben"}), 404, "not_found")
    refused(http.get(events, headers={"Last-Event-ID": "7x"}), 400, "malformed_request")
    refused(http.get(events, params={"last_event_id": "-1"}), 400, "malformed_request")
    with http.stream("GET", events, params={"user": "ann"}) as response:
        assert [event for event, _, _ in frames(response)][-1] == "done"


def test_a_blocking_run_has_no_events_to_follow_and_an_ended_run_cannot_be_stopped(http: httpx.Client) -> None:
    workflow_id = published(http, "greet_blocking")
    run_id = ok(http.post(f"/api/workflows/{workflow_id}/run", json={"inputs": {"city": "Kyiv"}}))["run_id"]

    refused(http.get(f"/api/workflow-runs/{run_id}/events"), 404, "not_found")
    ended = refused(http.post(f"/api/workflow-runs/{run_id}/stop"), 409, "conflict")
    assert "'succeeded'" in ended
