"""The turn as the design describes it, over real HTTP: review before recall, the thinking log kept
out of the answer, keep-alive on time, a cached window that heals itself, the totals of a stopped
turn. Against `memagent serve` on PostgreSQL + Redis, talking to the OpenAI-protocol test server."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import httpx
import pytest
import redis

from tests.integration.streaming_helpers import (
    SSEStream,
    answer_of,
    finished_message,
    open_chat,
    open_events,
    serving,
    shared_backends,
    streamed_text,
    wait_until,
)
from tests.integration.upkeep_calls import is_memory_upkeep
from tests.llm_server import ScriptedLLMServer
from tests.llm_server_scripts import TextScript, call, stall, text, tool_calls
from tests.service import Service

pytestmark = pytest.mark.integration

KEEPALIVE = 1.0
GRACE = 2.4  # not a multiple of the keep-alive: a ping that waits for a client beat comes late


@pytest.fixture(scope="module")
def backends() -> Iterator[dict[str, str]]:
    with shared_backends() as env:
        yield env


@pytest.fixture(scope="module")
def service(
    backends: dict[str, str], shared_server: ScriptedLLMServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Service]:
    env = backends | {
        "MEMAGENT_LLM__PROVIDER": "openai",
        "MEMAGENT_LLM__BASE_URL": shared_server.base_url,
        "MEMAGENT_LLM__API_KEY": "test-key",
        "MEMAGENT_LLM__MAX_RETRIES": "0",
        "MEMAGENT_EVENTS__KEEPALIVE": str(KEEPALIVE),
        "MEMAGENT_TURN__CLIENT_GRACE": str(GRACE),
        "MEMAGENT_TURN__STOP_CHECK_INTERVAL": "0.05",
        "MEMAGENT_AGENT__INPUT_REVIEW_KEYWORDS": '["forbidden"]',
        "MEMAGENT_AGENT__OUTPUT_REVIEW_KEYWORDS": '["classified"]',
        "MEMAGENT_AGENT__REVIEW_RESPONSE": "I can't discuss that.",
    }
    shared_server.answer_aside(is_memory_upkeep)
    with serving(env, tmp_path_factory.mktemp("fidelity")) as running:
        yield running
    shared_server.answer_aside(None)


@pytest.fixture
def client(service: Service) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=service.base_url, timeout=20) as http:
        yield http


def ids_of(data: dict[str, str]) -> tuple[str, str, str]:
    return data["task_id"], data["conversation_id"], data["message_id"]


def test_an_input_review_hit_answers_before_memory_and_calls_no_model(
    client: httpx.Client, server: ScriptedLLMServer
) -> None:
    with open_chat(client, "tell me the FORBIDDEN thing") as stream:
        stream.rest()
    assert stream.events == ["agent_message", "agent_end", "done"]
    assert answer_of(stream.frames) == "I can't discuss that."
    time.sleep(0.5)  # no memory upkeep either: nothing reaches the model server afterwards
    assert server.chat_requests == []
    _, conversation_id, message_id = ids_of(stream.first_data())
    steps = client.get(f"/api/messages/{message_id}/thoughts").json()["data"]
    assert [s["event"] for s in steps] == ["agent_message"]
    assert "input review" in steps[0]["thought"]


def test_text_before_a_tool_call_streams_at_once_and_its_thought_event_takes_it_out_of_the_answer(
    client: httpx.Client, server: ScriptedLLMServer
) -> None:
    server.enqueue(
        tool_calls(call("calculator", {"expression": "2+2"}), content=("Let me compute that.",)),
        text("It is ", "4."),
    )
    with open_chat(client, "what is 2+2?") as stream:
        stream.rest()
    [early] = [f for f in stream.frames if f.event == "agent_message" and f.data["answer"] == "Let me compute that."]
    assert early.data["tentative"] is True
    thought = next(f for f in stream.frames if f.event == "agent_thought")
    assert (thought.data["id"], thought.data["thought"]) == (early.data["id"], "Let me compute that.")
    assert answer_of(stream.frames) == "It is 4."
    task_id, conversation_id, message_id = ids_of(stream.first_data())
    assert finished_message(client, conversation_id, message_id)["answer"] == "It is 4."
    steps = client.get(f"/api/messages/{message_id}/thoughts").json()["data"]
    assert [s["thought"] for s in steps if s["event"] == "agent_thought"] == ["Let me compute that."]


def test_with_tools_offered_text_reaches_the_client_while_the_model_still_writes_and_a_stop_keeps_it(
    client: httpx.Client, server: ScriptedLLMServer
) -> None:
    server.enqueue(stall("Hel", "lo", seconds=30))  # the agent offers tools; the step has not ended
    with open_chat(client, "say hello") as stream:
        first = stream.until_event("agent_message", limit=10)
        task_id, conversation_id, message_id = ids_of(stream.first_data())
        stream.until(lambda f: answer_of(stream.frames) == "Hello", limit=10)
        assert client.post(f"/api/tasks/{task_id}/stop").status_code == 200
        stream.rest()
    assert first.data["answer"] == "Hel"
    assert stream.events[-2:] == ["stop", "done"]
    assert finished_message(client, conversation_id, message_id)["answer"] == "Hello"


def test_an_output_keyword_split_across_chunks_never_leaves_the_server(
    client: httpx.Client, server: ScriptedLLMServer
) -> None:
    server.enqueue(text("Fine. The doc is CLASS", "IFI", "ED: the plan is"))
    with open_chat(client, "tell me the plan") as stream:
        stream.rest()
    sent = streamed_text(stream.frames)
    assert sent == "Fine. The doc is "  # the end that could begin the keyword was held back
    end = stream.frames[-2]
    assert (end.event, end.data["answer"], end.data["finish_reason"]) == (
        "agent_end", "I can't discuss that.", "content_filter")
    _, conversation_id, message_id = ids_of(stream.first_data())
    assert finished_message(client, conversation_id, message_id)["answer"] == "I can't discuss that."
    steps = client.get(f"/api/messages/{message_id}/thoughts").json()["data"]
    assert any(s["answer"] == "I can't discuss that." and "output review" in s["thought"] for s in steps)


def test_the_forced_answer_after_the_last_tool_round_is_asked_in_a_system_message(
    client: httpx.Client, server: ScriptedLLMServer
) -> None:
    rounds = [tool_calls(call("calculator", {"expression": f"{n}+1"})) for n in range(5)]
    server.enqueue(*rounds, text("Done."))
    assert client.post("/api/chat", json={"query": "count up"}).json()["status"] == "normal"
    notes = [m for r in server.scripted_requests for m in r.body["messages"]
             if "used all tool rounds" in str(m.get("content"))]
    assert [m["role"] for m in notes] == ["system"]  # an instruction of the platform, not the user's words


def test_keepalive_pings_come_on_time_while_the_model_is_silent(
    client: httpx.Client, server: ScriptedLLMServer
) -> None:
    server.enqueue(stall(seconds=3.6))  # a model silent before its first token
    with open_chat(client, "say hello slowly") as stream:
        stream.rest()
    assert stream.events[-2:] == ["agent_end", "done"]
    answer_at = next(i for i, f in enumerate(stream.frames) if f.event == "agent_message")
    marks = [f.at for f in stream.frames[:answer_at] if f.is_comment or f.event == "long_term_memory_recall"]
    gaps = [later - earlier for earlier, later in zip(marks, marks[1:], strict=False)]
    assert len(gaps) >= 3, stream.events
    assert all(KEEPALIVE - 0.25 <= gap <= KEEPALIVE + 0.4 for gap in gaps), gaps



def test_a_window_cut_in_redis_is_rebuilt_and_the_next_turns_work(
    client: httpx.Client, server: ScriptedLLMServer, backends: dict[str, str]
) -> None:
    server.enqueue(text("First answer."))
    first = client.post("/api/chat", json={"query": "first question"}).json()
    assert first["status"] == "normal"
    store = redis.Redis.from_url(backends["MEMAGENT_REDIS__URL"])
    key = f"{backends['MEMAGENT_REDIS__KEY_PREFIX']}window:{first['conversation_id']}"
    window = json.loads(store.get(key) or b"[]")
    assert len(window) == 2
    store.set(key, json.dumps(window[:1]))  # one message cut: an odd window
    for query in ("second question", "third question"):
        server.enqueue(text("Fine."))
        turn = client.post("/api/chat", json={"query": query, "conversation_id": first["conversation_id"]})
        assert turn.json()["status"] == "normal", turn.text
    prompt = server.scripted_requests[-1].body["messages"]
    assert any(m.get("content") == "first question" for m in prompt)


def test_a_stopped_turn_records_what_it_consumed_as_estimated_totals(
    client: httpx.Client, server: ScriptedLLMServer
) -> None:
    server.enqueue(stall("Half an ", "answer", seconds=30))
    with open_chat(client, "stall please") as stream:
        stream.until_event("long_term_memory_recall")
        task_id, conversation_id, message_id = ids_of(stream.first_data())
        wait_until(lambda: server.scripted_requests or None, 10, "the model call")
        time.sleep(0.3)  # the two chunks are out
        assert client.post(f"/api/tasks/{task_id}/stop").status_code == 200
        stream.rest()
    assert stream.events[-2:] == ["stop", "done"]
    stop = stream.frames[-2]
    assert stop.data["total_token_count"] > 0
    assert stop.data["tokens_estimated"] is True
    stored = finished_message(client, conversation_id, message_id)
    assert stored["status"] == "stop"
    assert stored["total_token_count"] == stop.data["total_token_count"]


def finish_reasons(stream: SSEStream) -> dict[str, str]:
    """The `finish_reason` of each frame that shows one, by event."""
    return {f.event: f.data["finish_reason"] for f in stream.logged if "finish_reason" in f.data}


def test_an_answer_cut_at_the_models_token_limit_ends_with_finish_reason_length(
    client: httpx.Client, server: ScriptedLLMServer
) -> None:
    server.enqueue(TextScript(["It was ", "a dark and"], finish_reason="length"))
    with open_chat(client, "tell me a long story") as stream:
        stream.rest()
    assert stream.events[-2:] == ["agent_end", "done"]
    assert finish_reasons(stream) == {"agent_end": "length"}  # on agent_end alone
    assert answer_of(stream.frames) == "It was a dark and"


def test_an_output_review_hit_ends_with_finish_reason_content_filter(
    client: httpx.Client, server: ScriptedLLMServer
) -> None:
    server.enqueue(text("That is ", "classified."))
    with open_chat(client, "what is the launch code?") as stream:
        stream.rest()
    end = stream.frames[-2]
    assert (end.event, end.data["answer"]) == ("agent_end", "I can't discuss that.")
    assert finish_reasons(stream) == {"agent_end": "content_filter"}
    with open_events(client, end.data["task_id"]) as replay:  # a replay of the finished turn says so too
        replay.rest()
    assert finish_reasons(replay) == {"agent_end": "content_filter"}
