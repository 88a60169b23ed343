"""Streaming a turn over real HTTP: SSE ids, resuming, replay, keep-alive, stop, client presence,
one turn at a time, and timeouts (docs/ARCHITECTURE.md §4), against `memagent serve` on SQLite with
the in-process backends.

Two services: one on the offline scripted model (slowed to 50 ms per 3-word chunk, so a turn's
length is set by its query's), and one on the openai provider pointed at the OpenAI-protocol test
server, whose `stall` script keeps a turn silent mid-stream for as long as a test needs.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest

from tests.integration.streaming_helpers import (
    TERMINAL,
    answer_of,
    finished_message,
    long_query,
    message_of,
    open_chat,
    open_events,
    open_sse,
    same_events,
    scripted_answer,
    serving,
    wait_until,
)
from tests.llm_server import ScriptedLLMServer
from tests.llm_server_scripts import stall, text
from tests.service import Service

pytestmark = pytest.mark.integration

GRACE = 1.5
KEEPALIVE = 0.3
CHUNK_DELAY = 0.05
OPENAI_TURN_TIMEOUT = 5.0  # the keep-alive test's 1.5 s stall ends well within it on a busy machine
# A stop is seen within one stop check (50 ms); the bound leaves room for a busy test machine,
# and is far below what is left of the turns stopped here.
STOP_BOUND = 2.5
COMMON = {
    "MEMAGENT_EVENTS__KEEPALIVE": str(KEEPALIVE),
    "MEMAGENT_TURN__CLIENT_GRACE": str(GRACE),
    "MEMAGENT_TURN__STOP_CHECK_INTERVAL": "0.05",
    # These tests are about the stream itself: every text delta goes out as it comes (domain.conversations.streaming).
    "MEMAGENT_AGENT__STREAM_THOUGHTS": "true",
}


@pytest.fixture(scope="module")
def scripted_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    folder = tmp_path_factory.mktemp("streaming-scripted")
    env = COMMON | {
        "MEMAGENT_DATABASE__URL": f"sqlite+aiosqlite:///{folder / 'memagent.db'}",
        "MEMAGENT_LLM__SCRIPTED_CHUNK_DELAY": str(CHUNK_DELAY),
    }
    with serving(env, folder) as service:
        yield service


@pytest.fixture(scope="module")
def llm_server() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer() as server:
        yield server


@pytest.fixture(scope="module")
def openai_service(llm_server: ScriptedLLMServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    folder = tmp_path_factory.mktemp("streaming-openai")
    env = COMMON | {
        "MEMAGENT_DATABASE__URL": f"sqlite+aiosqlite:///{folder / 'memagent.db'}",
        "MEMAGENT_LLM__PROVIDER": "openai",
        "MEMAGENT_LLM__BASE_URL": llm_server.base_url,
        "MEMAGENT_LLM__API_KEY": "test-key",
        "MEMAGENT_LLM__MODEL": "gpt-4o-mini",
        "MEMAGENT_LLM__MAX_RETRIES": "0",
        "MEMAGENT_TURN__TIMEOUT": str(OPENAI_TURN_TIMEOUT),
    }
    with serving(env, folder) as service:
        yield service


@pytest.fixture
def client(scripted_service: Service) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=scripted_service.base_url, timeout=10) as http:
        yield http


@pytest.fixture
def llm(llm_server: ScriptedLLMServer) -> ScriptedLLMServer:
    llm_server.reset()
    return llm_server


@pytest.fixture
def openai_client(openai_service: Service) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=openai_service.base_url, timeout=10) as http:
        yield http


def ids_of(data: dict[str, str]) -> tuple[str, str, str]:
    return data["task_id"], data["conversation_id"], data["message_id"]


# --- ids, totals, resume, replay ---------------------------------------------------------------


def test_sse_ids_run_one_to_n_and_done_follows_the_terminal_event(client: httpx.Client) -> None:
    query = long_query(12, "ids")
    with open_chat(client, query) as stream:
        stream.rest()
    logged = stream.logged
    assert [f.id for f in logged] == list(range(1, len(logged) + 1))
    assert stream.events[-2:] == ["agent_end", "done"]
    assert [e for e in stream.events if e in TERMINAL] == ["agent_end"]
    assert stream.frames[-1].id is None  # `done` is not an event of the log: nothing to resume after it
    assert answer_of(stream.frames) == scripted_answer(query)


def test_the_last_agent_message_is_an_empty_delta_carrying_the_turns_totals(client: httpx.Client) -> None:
    with open_chat(client, long_query(12, "totals")) as stream:
        stream.rest()
    messages = [f.data for f in stream.frames if f.event == "agent_message"]
    last, end = messages[-1], stream.frames[-2].data
    assert last["answer"] == ""
    assert last["total_token_count"] > 0
    assert all(m["total_token_count"] == 0 for m in messages[:-1])
    assert last["total_token_count"] == end["total_token_count"]
    _, conversation_id, message_id = ids_of(last)
    stored = message_of(client, conversation_id, message_id)
    assert stored["total_token_count"] == last["total_token_count"]
    assert stored["total_price"] == last["total_price"]


@pytest.mark.parametrize("how", ["header", "query"])
def test_a_dropped_client_resumes_after_its_last_event_id_and_follows_live_to_done(
    client: httpx.Client, how: str
) -> None:
    with open_chat(client, long_query(120, f"resume-{how}")) as first:
        first.nth_message(3)
    seen = first.last_id
    task_id, conversation_id, message_id = ids_of(first.first_data())
    assert message_of(client, conversation_id, message_id)["status"] == "running"  # so what follows is live

    kwargs = {"headers": {"Last-Event-ID": str(seen)}} if how == "header" else {"params": {"last_event_id": seen}}
    with open_sse(client, "GET", f"/api/tasks/{task_id}/events", **kwargs) as resumed:
        resumed.rest()
    assert resumed.logged[0].id == seen + 1
    assert resumed.events[-2:] == ["agent_end", "done"]

    with open_events(client, task_id) as full:
        full.rest()
    assert same_events(first.frames) + same_events(resumed.frames) == same_events(full.frames)
    assert finished_message(client, conversation_id, message_id)["status"] == "normal"


def test_a_finished_task_replays_in_full_from_zero(client: httpx.Client) -> None:
    with open_chat(client, long_query(9, "replay")) as original:
        original.rest()
    task_id = original.first_data()["task_id"]
    for after in (None, 0):
        with open_events(client, task_id, after) as replay:
            replay.rest(limit=5)
        assert same_events(replay.frames) == same_events(original.frames)
        assert replay.events[-1] == "done"


def test_resuming_at_or_past_the_terminal_event_is_204_so_an_eventsource_stops(client: httpx.Client) -> None:
    with open_chat(client, "short") as original:
        original.rest()
    task_id = original.first_data()["task_id"]
    for seen in (original.last_id, original.last_id + 5):
        answer = client.get(f"/api/tasks/{task_id}/events", headers={"Last-Event-ID": str(seen)})
        assert (answer.status_code, answer.content) == (204, b"")
    with open_events(client, task_id, original.last_id - 1) as before_the_end:
        before_the_end.rest(limit=5)
    assert before_the_end.events == ["agent_end", "done"]


def test_the_first_frame_tells_an_eventsource_when_to_reconnect(client: httpx.Client) -> None:
    with client.stream("POST", "/api/chat", json={"query": "retry hint", "stream": True}) as response:
        body = response.read().decode()
    first, rest = body.split("\n\n", 1)
    assert "retry: 1000" in first.splitlines()
    assert "\nretry:" not in "\n" + rest  # once is enough


def assert_malformed(response: httpx.Response) -> None:
    assert response.status_code == 400, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"code", "message"}
    assert body["code"] == "malformed_request"
    assert "Last-Event-ID" in body["message"]


@pytest.fixture(scope="module")
def finished_task_id(scripted_service: Service) -> str:
    with httpx.Client(base_url=scripted_service.base_url, timeout=10) as http:
        return str(http.post("/api/chat", json={"query": "for a task id"}).json()["task_id"])


@pytest.mark.parametrize("bad", ["abc", "-1", "1.5", "0x10", "+3", "7a", "1" * 19, "9" * 5000])
def test_a_malformed_last_event_id_is_a_400_json_error(client: httpx.Client, finished_task_id: str, bad: str) -> None:
    url = f"/api/tasks/{finished_task_id}/events"
    assert_malformed(client.get(url, headers={"Last-Event-ID": bad}))
    assert_malformed(client.get(url, params={"last_event_id": bad}))


@pytest.mark.parametrize("bad", ["\u00b2", "\u2460"])  # "²", "①": str.isdigit() says yes, int() says no
def test_a_last_event_id_of_non_ascii_digits_is_a_400_not_a_500(
    client: httpx.Client, finished_task_id: str, bad: str
) -> None:
    assert_malformed(client.get(f"/api/tasks/{finished_task_id}/events", params={"last_event_id": bad}))


def test_an_unknown_task_is_not_found(client: httpx.Client) -> None:
    for response in (client.get("/api/tasks/no-such-task/events"), client.post("/api/tasks/no-such-task/stop")):
        assert response.status_code == 404
        assert response.json()["code"] == "not_found"
        assert set(response.json()) == {"code", "message"}


# --- stop, presence, one turn at a time --------------------------------------------------------


def test_stop_answers_at_once_and_the_turn_ends_with_stop_keeping_its_partial_answer(client: httpx.Client) -> None:
    query = long_query(200, "stop")
    with open_chat(client, query) as stream:
        stream.nth_message(3)
        task_id, conversation_id, message_id = ids_of(stream.first_data())
        asked = time.monotonic()
        response = client.post(f"/api/tasks/{task_id}/stop")
        answered = time.monotonic() - asked
        stream.rest()
    assert response.status_code == 200, response.text
    assert response.json() == {"task_id": task_id, "result": "stopped", "status": "stop"}
    assert answered < STOP_BOUND
    assert stream.events[-2:] == ["stop", "done"]
    assert stream.frames[-2].at - asked < STOP_BOUND  # seen within a step, not at the end of the answer
    streamed = answer_of(stream.frames)
    stored = finished_message(client, conversation_id, message_id)
    assert stored["status"] == "stop"
    assert stored["answer"] == streamed == stream.frames[-2].data["answer"]
    assert streamed
    assert scripted_answer(query).startswith(streamed)
    assert streamed != scripted_answer(query)


def test_stopping_a_finished_task_is_a_conflict_naming_its_final_status(client: httpx.Client) -> None:
    with open_chat(client, "finish me") as stream:
        stream.rest()
    response = client.post(f"/api/tasks/{stream.first_data()['task_id']}/stop")
    assert response.status_code == 409
    assert response.json()["code"] == "conflict"
    assert "'normal'" in response.json()["message"]

    with open_chat(client, long_query(200, "stop-twice")) as stopped:
        stopped.nth_message(1)
        task_id = stopped.first_data()["task_id"]
        assert client.post(f"/api/tasks/{task_id}/stop").status_code == 200
        stopped.rest()
    again = client.post(f"/api/tasks/{task_id}/stop")
    assert again.status_code == 409
    assert "'stop'" in again.json()["message"]


def test_a_client_gone_past_the_grace_period_stops_the_turn(client: httpx.Client) -> None:
    query = long_query(300, "gone")  # about 5 s of answer: far longer than the grace period
    with open_chat(client, query) as stream:
        stream.nth_message(2)
    gone_at = time.monotonic()
    _, conversation_id, message_id = ids_of(stream.first_data())
    stored = finished_message(client, conversation_id, message_id, limit=GRACE + 5)
    waited = time.monotonic() - gone_at
    assert stored["status"] == "stop"
    assert stored["error"] == "No client followed the turn any more."
    assert waited > GRACE / 3  # not at once: the lease outlives the connection by up to the grace period
    assert stored["answer"]
    assert scripted_answer(query).startswith(stored["answer"])
    assert stored["answer"] != scripted_answer(query)


def test_a_client_back_within_the_grace_period_lets_the_turn_complete(client: httpx.Client) -> None:
    query = long_query(200, "back")  # about 3.5 s of answer: it outlives the grace period
    with open_chat(client, query) as first:
        first.nth_message(2)
    gone_at = time.monotonic()
    time.sleep(0.2)  # away for a moment: the lease, renewed every GRACE / 3, has at least 2 / 3 of GRACE left
    task_id, conversation_id, message_id = ids_of(first.first_data())
    with open_events(client, task_id, first.last_id) as back:
        back.rest()
    assert back.events[-2:] == ["agent_end", "done"]
    assert back.frames[-2].at - gone_at > GRACE  # it ran past the grace period, followed again
    assert answer_of(first.frames + back.frames) == scripted_answer(query)
    assert finished_message(client, conversation_id, message_id)["status"] == "normal"


def test_a_second_turn_while_one_runs_in_the_conversation_is_a_conflict(client: httpx.Client) -> None:
    with open_chat(client, long_query(200, "busy")) as running:
        running.nth_message(1)
        task_id, conversation_id, _ = ids_of(running.first_data())
        for stream in (True, False):
            second = client.post("/api/chat", json={"query": "me too", "conversation_id": conversation_id,
                                                    "stream": stream})
            assert second.status_code == 409, second.text
            assert second.json()["code"] == "conflict"
        assert client.post(f"/api/tasks/{task_id}/stop").status_code == 200
        running.rest()
    after = client.post("/api/chat", json={"query": "now it is free", "conversation_id": conversation_id})
    assert after.status_code == 200
    assert after.json()["status"] == "normal"


# --- a silent model: keep-alive, stop mid-stall, timeout (openai provider, test LLM server) ----


def test_keepalive_pings_arrive_while_the_model_is_silent(
    openai_client: httpx.Client, llm: ScriptedLLMServer
) -> None:
    silence = 1.5
    llm.enqueue(stall("Hel", "lo", seconds=silence))
    with open_chat(openai_client, "say hello slowly") as stream:
        stream.rest()
    assert stream.events[-2:] == ["agent_end", "done"]
    last_text = max(i for i, f in enumerate(stream.frames) if f.event == "agent_message" and f.data["answer"])
    pings = [f for f in stream.frames[last_text:] if f.is_comment]
    assert len(pings) >= 2, stream.events
    assert len(pings) <= silence / KEEPALIVE + 1, stream.events  # one per keep-alive interval, not a flood
    assert answer_of(stream.frames) == "Hello"


def test_stop_while_the_model_stalls_cancels_the_upstream_call(
    openai_client: httpx.Client, llm: ScriptedLLMServer
) -> None:
    llm.enqueue(stall("Half an ", "answer", seconds=30))
    with open_chat(openai_client, "stall please") as stream:
        # Both deltas may come merged into one frame: wait for the end of the second.
        stream.until(lambda f: f.event == "agent_message" and f.data["answer"].endswith("answer"))
        task_id, conversation_id, message_id = ids_of(stream.first_data())
        asked = time.monotonic()
        assert openai_client.post(f"/api/tasks/{task_id}/stop").status_code == 200
        stream.rest()
    assert stream.events[-2:] == ["stop", "done"]
    assert stream.frames[-2].at - asked < STOP_BOUND
    upstream = llm.chat_requests[-1]
    assert upstream.done.wait(5), "the upstream stream was neither finished nor abandoned"
    assert upstream.disconnected is True
    assert upstream.finished_monotonic is not None
    assert upstream.finished_monotonic - asked < STOP_BOUND
    stored = finished_message(openai_client, conversation_id, message_id)
    assert (stored["status"], stored["answer"]) == ("stop", "Half an answer")


def test_a_turn_past_its_timeout_ends_with_timeout(openai_client: httpx.Client, llm: ScriptedLLMServer) -> None:
    llm.enqueue(stall("Never ", "finished", seconds=30))
    started = time.monotonic()
    with open_chat(openai_client, "take forever") as stream:
        stream.rest(limit=OPENAI_TURN_TIMEOUT + 10)
    assert stream.events[-2:] == ["timeout", "done"]
    assert OPENAI_TURN_TIMEOUT - 0.5 < stream.frames[-2].at - started < OPENAI_TURN_TIMEOUT + 3
    assert f"{OPENAI_TURN_TIMEOUT:g} s" in stream.frames[-2].data["observation"]
    _, conversation_id, message_id = ids_of(stream.first_data())
    stored = finished_message(openai_client, conversation_id, message_id)
    assert stored["status"] == "timeout"
    assert stored["answer"] == "Never finished"
    upstream = [r for r in llm.chat_requests if r.script == "StallScript"][-1]  # not the title call after it
    assert upstream.done.wait(5)
    assert upstream.disconnected is True  # the model call was cancelled with the turn


def test_the_openai_service_streams_the_models_chunks_in_order(
    openai_client: httpx.Client, llm: ScriptedLLMServer
) -> None:
    llm.enqueue(text("One ", "two ", "three", delay=0.05))
    with open_chat(openai_client, "count") as stream:
        stream.rest()
    deltas = [f.data for f in stream.frames if f.event == "agent_message"]
    # 50 ms apart, the chunks come one by one; the totals, right behind the last, may travel with it.
    assert [d["answer"] for d in deltas][:3] == ["One ", "two ", "three"]
    assert "".join(d["answer"] for d in deltas) == "One two three"
    assert deltas[-1]["total_token_count"] > 0
    assert stream.events[-2:] == ["agent_end", "done"]
    wait_until(lambda: llm.chat_requests[-1].done.is_set(), 5, "the upstream reply to finish")
    assert llm.chat_requests[-1].disconnected is False
