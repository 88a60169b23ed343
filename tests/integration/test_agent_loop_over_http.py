"""The agent loop end to end: the real `memagent serve` process, its real model adapters, and
the project's OpenAI-protocol test server standing in for the LLM, all over real HTTP."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from domain.tools.calls import INVALID_ARGUMENTS_KEY
from tests.llm_server import ScriptedLLMServer
from tests.llm_server_scripts import call, error, text, tool_calls
from tests.service import Service, parse_sse, running_service

pytestmark = pytest.mark.integration

API_KEY = "sk-e2e-secret"
PRICE = {"input": 1000.0, "output": 2000.0}  # USD per million tokens: large, so prices are visible
REACT_CALL = 'I will look it up.\n```json\n{"name": "current_time", "args": {"timezone": "UTC"}}\n```'


@pytest.fixture(scope="module")
def llm() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer() as server:
        yield server


@pytest.fixture
def server(llm: ScriptedLLMServer) -> ScriptedLLMServer:
    llm.reset()
    return llm


def start(llm: ScriptedLLMServer, tmp: pytest.TempPathFactory, **extra: str) -> Iterator[Service]:
    folder = tmp.mktemp("service")
    env = {
        "MEMAGENT_DATABASE__URL": f"sqlite+aiosqlite:///{folder / 'memagent.db'}",
        "MEMAGENT_LLM__PROVIDER": "openai",
        "MEMAGENT_LLM__BASE_URL": llm.base_url,
        "MEMAGENT_LLM__API_KEY": API_KEY,
        "MEMAGENT_LLM__MODEL": "gpt-4o-mini",
        "MEMAGENT_LLM__TIMEOUT": "10",
        "MEMAGENT_LLM__MAX_RETRIES": "1",
        "MEMAGENT_LLM__RETRY_INITIAL_DELAY": "0.01",
        "MEMAGENT_LLM__PRICES": json.dumps({"gpt-4o-mini": PRICE}),
        "MEMAGENT_AGENT__TOOLS": json.dumps(["current_time"]),
        # Memory upkeep asks the same model too. Inline, with no summary, it is done when the turn
        # ends, after the turn's own calls: it never takes a reply scripted for the next test.
        "MEMAGENT_AGENT__SUMMARY_ENABLED": "false",
        "MEMAGENT_MEMORY__ENTITY_EXTRACTION": "inline",
    }
    with running_service(env | extra, Path(folder)) as service:
        yield service


@pytest.fixture(scope="module")
def calling(llm: ScriptedLLMServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """gpt-4o-mini: native tool calls and images, from the capability table. Every step's text
    streams at once (`stream_thoughts`), so these tests see the stream as the model sends it."""
    yield from start(llm, tmp_path_factory, MEMAGENT_AGENT__STREAM_THOUGHTS="true")


@pytest.fixture(scope="module")
def react(llm: ScriptedLLMServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """The same model told it can only reason, and see no images: ReAct."""
    yield from start(
        llm,
        tmp_path_factory,
        MEMAGENT_LLM__CAPABILITIES__TOOL_CALL="false",
        MEMAGENT_LLM__CAPABILITIES__AGENT_THOUGHT="true",
        MEMAGENT_LLM__CAPABILITIES__IMAGE_INPUT="false",
    )


@pytest.fixture(scope="module")
def agentscope(llm: ScriptedLLMServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    yield from start(llm, tmp_path_factory, MEMAGENT_LLM__PROVIDER="agentscope")


def chat(service: Service, query: str, **body: Any) -> dict[str, Any]:
    with httpx.Client(base_url=service.base_url, timeout=30) as http:
        response = http.post("/api/chat", json={"query": query, **body})
        assert response.status_code == 200, response.text
        return dict(response.json())


def stream_chat(service: Service, query: str) -> list[dict[str, Any]]:
    with httpx.Client(base_url=service.base_url, timeout=30) as http:
        response = http.post("/api/chat", json={"query": query, "stream": True})
        return [f for f in parse_sse(response.text) if f["event"] != ":"]


def get(service: Service, path: str) -> list[dict[str, Any]]:
    with httpx.Client(base_url=service.base_url, timeout=30) as http:
        return list(http.get(path).json()["data"])


def priced(prompt_tokens: int, completion_tokens: int) -> float:
    return (prompt_tokens * PRICE["input"] + completion_tokens * PRICE["output"]) / 1e6


def test_streamed_text_reaches_the_client_as_agent_message_deltas(server: ScriptedLLMServer, calling: Service) -> None:
    server.enqueue(text("Hello", " from", " the model.", usage=(20, 3), delay=0.05))
    frames = stream_chat(calling, "Say hello")
    deltas = [f["data"] for f in frames if f["event"] == "agent_message"]
    answers = [d["answer"] for d in deltas]
    # Chunks 50 ms apart arrive one by one; the totals, right behind the last, may travel with it.
    assert answers[:3] == ["Hello", " from", " the model."]
    assert "".join(answers) == "Hello from the model."
    assert deltas[-1]["total_token_count"] == 23
    assert [f["event"] for f in frames][-2:] == ["agent_end", "done"]
    end = frames[-2]["data"]
    assert (end["answer"], end["total_token_count"]) == ("Hello from the model.", 23)
    assert end["total_price"] == pytest.approx(priced(20, 3))


def test_two_parallel_tool_calls_persist_a_complete_trace(server: ScriptedLLMServer, calling: Service) -> None:
    server.enqueue(
        tool_calls(
            call("current_time", {"timezone": "UTC"}, id="call_utc"),
            call("current_time", {"timezone": "Asia/Tokyo"}, id="call_tokyo"),
            content=["Checking", " both."],
            pieces=3,
            interleave=True,
        ),
        text("Both times are in.", usage=(60, 5)),
    )
    result = chat(calling, "What time is it in UTC and in Tokyo?")
    assert (result["status"], result["answer"]) == ("normal", "Both times are in.")
    actions = [t for t in result["thoughts"] if t["event"] == "agent_action"]
    assert [a["tool_input"] for a in actions] == [{"timezone": "UTC"}, {"timezone": "Asia/Tokyo"}]
    assert '"timezone": "Asia/Tokyo"' in actions[1]["observation"]

    steps = get(calling, f"/api/messages/{result['message_id']}/thoughts")
    assert [s["event"] for s in steps] == [
        "long_term_memory_recall", "agent_thought", "agent_action", "agent_action", "agent_message",
    ]
    assert [s["tool_input"] for s in steps[2:4]] == [{"timezone": "UTC"}, {"timezone": "Asia/Tokyo"}]
    thought, answer = steps[1], steps[4]
    assert thought["tool"] == "current_time;current_time"
    assert thought["thought"] == "Checking both."
    assert thought["tool_input"] == {"current_time": {"timezone": "UTC"}, "current_time#2": {"timezone": "Asia/Tokyo"}}
    observed = json.loads(thought["observation"])
    assert json.loads(observed["current_time"])["datetime"].endswith("+00:00")
    assert json.loads(observed["current_time#2"])["datetime"].endswith("+09:00")
    assert (answer["message_token_count"], answer["answer_token_count"]) == (60, 5)
    assert answer["total_price"] == pytest.approx(priced(60, 5))
    for step in (thought, answer):
        assert step["total_token_count"] > 0
        assert step["total_price"] > 0
        assert step["latency"] > 0

    first, second = server.chat_requests[:2]  # the turn's own calls come first
    assert [t["function"]["name"] for t in first.tools] == ["current_time"]
    assistant, *tool_messages = second.messages[-3:]
    assert [c["id"] for c in assistant["tool_calls"]] == ["call_utc", "call_tokyo"]
    assert [m["tool_call_id"] for m in tool_messages] == ["call_utc", "call_tokyo"]


def test_without_usage_from_the_model_tokens_are_counted_locally(server: ScriptedLLMServer, calling: Service) -> None:
    server.enqueue(text("Counted", " here.", include_usage=False))
    result = chat(calling, "Count my tokens")
    assert result["status"] == "normal"
    assert result["total_token_count"] > 0
    with httpx.Client(base_url=calling.base_url, timeout=30) as http:
        [message] = http.get(f"/api/conversations/{result['conversation_id']}/messages").json()["data"]
    # Priced on the local count (the ledger marks it estimated), not given away.
    assert result["total_price"] == pytest.approx(priced(message["message_token_count"], message["answer_token_count"]))
    assert result["total_price"] > 0


def test_a_model_error_ends_the_turn_with_an_error_and_keeps_the_query(
    server: ScriptedLLMServer, calling: Service
) -> None:
    server.enqueue(error(500, "the model is down"), error(500, "the model is down"))
    frames = stream_chat(calling, "Are you there?")
    assert [f["event"] for f in frames][-2:] == ["error", "done"]
    assert frames[-2]["data"]["observation"] == "The model server failed to answer (HTTP 500); try again shortly."
    assert API_KEY not in json.dumps(frames)
    assert len(server.chat_requests) == 2  # one retry, as configured
    [stored] = get(calling, f"/api/conversations/{frames[0]['data']['conversation_id']}/messages")
    assert (stored["query"], stored["status"]) == ("Are you there?", "error")
    assert "HTTP 500" in stored["error"]


def test_images_reach_a_model_that_accepts_them_as_image_parts(server: ScriptedLLMServer, calling: Service) -> None:
    server.enqueue(text("A cat."))
    chat(calling, "What is in the picture?", image_urls=["https://img.test/cat.png"])
    user = server.chat_requests[0].messages[-1]
    assert user["content"] == [
        {"type": "text", "text": "What is in the picture?"},
        {"type": "image_url", "image_url": {"url": "https://img.test/cat.png"}},
    ]


def test_tool_arguments_that_are_not_json_come_back_to_the_model_as_an_argument_error(
    server: ScriptedLLMServer, calling: Service
) -> None:
    server.enqueue(tool_calls(call("current_time", '{"timezone": "Eur', id="call_bad")), text("Let me retry."))
    result = chat(calling, "Time in Europe?")
    assert (result["status"], result["answer"]) == ("normal", "Let me retry.")
    [action] = [t for t in result["thoughts"] if t["event"] == "agent_action"]
    assert action["tool_input"] == {INVALID_ARGUMENTS_KEY: '{"timezone": "Eur'}
    [answered] = [m for m in server.chat_requests[1].messages if m["role"] == "tool"]
    assert answered["tool_call_id"] == "call_bad"
    assert answered["content"].startswith("The arguments for tool 'current_time' are invalid")


def test_a_react_turn_uses_a_prompt_not_native_tools_and_persists_its_trace(
    server: ScriptedLLMServer, react: Service
) -> None:
    server.enqueue(text(REACT_CALL), text("It is noon UTC."))
    result = chat(react, "What time is it?")
    assert (result["status"], result["answer"]) == ("normal", "It is noon UTC.")
    first, second = server.chat_requests[:2]
    assert "tools" not in first.body
    system = first.messages[0]
    assert system["role"] == "system"
    assert "current_time" in system["content"]
    assert "```json" in system["content"]
    assert second.messages[-1]["content"].startswith("Result of current_time:")

    steps = get(react, f"/api/messages/{result['message_id']}/thoughts")
    [thought] = [s for s in steps if s["event"] == "agent_thought"]
    assert (thought["tool"], thought["tool_input"]) == ("current_time", {"current_time": {"timezone": "UTC"}})
    assert thought["thought"] == "I will look it up."
    assert json.loads(json.loads(thought["observation"])["current_time"])["timezone"] == "UTC"
    # Model steps carry tokens; recall and tool-call steps spend none.
    assert all(s["total_token_count"] > 0 for s in steps if s["event"] in ("agent_thought", "agent_message"))


def test_a_react_answer_streams_delta_by_delta_and_its_action_block_is_never_sent(
    server: ScriptedLLMServer, react: Service
) -> None:
    server.enqueue(text("``", "`json\n" + REACT_CALL.split("```json\n", 1)[-1], delay=0.05),
                   text("It is ", "noon ", "UTC.", delay=0.05))
    frames = stream_chat(react, "What time is it?")
    answers = [f["data"]["answer"] for f in frames if f["event"] == "agent_message"]
    assert answers[:3] == ["It is ", "noon ", "UTC."]
    assert "```" not in "".join(answers)
    assert [f["event"] for f in frames][-2:] == ["agent_end", "done"]


def test_unparseable_react_json_is_a_plain_answer(server: ScriptedLLMServer, react: Service) -> None:
    broken = 'Calling:\n```json\n{"name": current_time, args}\n```'
    server.enqueue(text(broken))
    result = chat(react, "What time is it?")
    assert (result["status"], result["answer"]) == ("normal", broken)
    steps = get(react, f"/api/messages/{result['message_id']}/thoughts")
    assert not any(s["tool"] for s in steps)


def test_images_are_not_sent_to_a_model_that_cannot_see_them(server: ScriptedLLMServer, react: Service) -> None:
    server.enqueue(text("I cannot see images."))
    result = chat(react, "What is in the picture?", image_urls=["https://img.test/cat.png"])
    assert server.chat_requests[0].messages[-1]["content"] == "What is in the picture?"
    steps = get(react, f"/api/messages/{result['message_id']}/thoughts")
    assert any("1 image(s) dropped" in s["thought"] for s in steps)


def test_an_agentscope_model_completes_a_turn_with_a_tool_call(server: ScriptedLLMServer, agentscope: Service) -> None:
    server.enqueue(
        tool_calls(call("current_time", {"timezone": "Europe/Paris"}, id="call_paris")),
        text("It is", " evening in Paris.", usage=(40, 4)),
    )
    result = chat(agentscope, "Time in Paris?")
    assert (result["status"], result["answer"]) == ("normal", "It is evening in Paris.")
    assert result["total_price"] > 0
    [action] = [t for t in result["thoughts"] if t["event"] == "agent_action"]
    assert '"timezone": "Europe/Paris"' in action["observation"]
    tool_message = server.chat_requests[1].messages[-1]
    assert (tool_message["role"], tool_message["tool_call_id"]) == ("tool", "call_paris")
