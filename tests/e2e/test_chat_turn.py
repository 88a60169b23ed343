"""The walking skeleton, driven through the running service over HTTP."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.service import Service, parse_sse, running_service


@pytest.fixture(scope="module")
def db_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("e2e") / "memagent.db"


@pytest.fixture(scope="module")
def service(db_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    # The answers of an agent with tools stream at once only with stream_thoughts on (domain.conversations.streaming).
    env = {"MEMAGENT_DATABASE__URL": f"sqlite+aiosqlite:///{db_path}", "MEMAGENT_AGENT__STREAM_THOUGHTS": "true"}
    with running_service(env, tmp_path_factory.mktemp("logs")) as running:
        yield running


@pytest.fixture
def client(service: Service) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=service.base_url, timeout=30) as http:
        yield http


def count_rows(db_path: Path) -> tuple[int, int, int]:
    with sqlite3.connect(db_path) as db:
        return tuple(  # type: ignore[return-value]
            db.execute(f"SELECT count(*) FROM {table}").fetchone()[0]  # noqa: S608 - fixed names
            for table in ("conversations", "messages", "message_agent_thoughts")
        )


def test_a_streamed_turn_sends_messages_then_agent_end_then_done(client: httpx.Client) -> None:
    response = client.post("/api/chat", json={"query": "Hello there, agent", "stream": True})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    frames = parse_sse(response.text)
    events = [f["event"] for f in frames]
    assert events[0] == "long_term_memory_recall"
    assert events.count("agent_message") >= 3
    assert events[-2:] == ["agent_end", "done"]
    ids = [int(str(f["id"])) for f in frames if "id" in f]
    assert ids == list(range(1, len(ids) + 1))
    data = frames[1]["data"]
    assert isinstance(data, dict)
    assert set(data) >= {"id", "task_id", "conversation_id", "message_id", "event", "answer", "latency"}
    answer = "".join(str(f["data"]["answer"]) for f in frames if f["event"] == "agent_message")  # type: ignore[index]
    assert "not a real LLM" in answer
    assert "Hello there, agent" in answer


def test_a_second_turn_prompt_snapshot_contains_the_first_exchange(client: httpx.Client) -> None:
    first = client.post("/api/chat", json={"query": "My favourite colour is teal."}).json()
    assert first["status"] == "normal"
    second = client.post(
        "/api/chat", json={"query": "Which colour do I like?", "conversation_id": first["conversation_id"]}
    ).json()
    assert "My favourite colour is teal." in second["answer"]
    steps = client.get(f"/api/messages/{second['message_id']}/thoughts").json()["data"]
    assert [s["position"] for s in steps] == list(range(len(steps)))
    prompt = json.loads(steps[-1]["message"])
    texts = [block["text"] for m in prompt for block in m["content"] if block["type"] == "text"]
    assert "My favourite colour is teal." in texts
    assert first["answer"] in texts
    assert steps[-1]["total_token_count"] > 0


def test_messages_are_listed_oldest_first_in_pages(client: httpx.Client) -> None:
    first = client.post("/api/chat", json={"query": "one"}).json()
    for query in ("two", "three"):
        client.post("/api/chat", json={"query": query, "conversation_id": first["conversation_id"]})
    url = f"/api/conversations/{first['conversation_id']}/messages"
    page1 = client.get(url, params={"limit": 2}).json()
    page2 = client.get(url, params={"limit": 2, "offset": 2}).json()
    assert [m["query"] for m in page1["data"] + page2["data"]] == ["one", "two", "three"]
    assert all(m["status"] == "normal" for m in page1["data"])
    beyond = client.get(url, params={"offset": 2**63})  # no database takes it
    assert (beyond.status_code, beyond.json()["code"]) == (422, "invalid_request")


def test_a_tool_marker_makes_the_offline_model_call_current_time(client: httpx.Client) -> None:
    result = client.post(
        "/api/chat", json={"query": 'What time is it? [[tool:current_time {"timezone": "UTC"}]]'}
    ).json()
    assert result["status"] == "normal"
    events = [t["event"] for t in result["thoughts"]]
    assert "agent_thought" in events
    assert "agent_action" in events
    action = next(t for t in result["thoughts"] if t["event"] == "agent_action")
    assert action["tool"] == "current_time"
    assert '"timezone": "UTC"' in action["observation"]
    steps = client.get(f"/api/messages/{result['message_id']}/thoughts").json()["data"]
    assert any(s["tool"] == "current_time" for s in steps)


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"query": ""}, 422, "invalid_input"),
        ({"query": "   \n"}, 422, "invalid_input"),
        ({"query": "x" * (32 * 1024 + 1)}, 422, "invalid_input"),
        ({"query": "hi", "conversation_id": "no-such-conversation"}, 404, "not_found"),
        ({}, 422, "invalid_request"),
        ({"query": 42}, 422, "invalid_request"),
        ({"query": "hi", "stream": "yes"}, 422, "invalid_request"),
        ({"query": "hi", "unknown": 1}, 422, "invalid_request"),
    ],
)
def test_bad_input_gets_a_json_error_and_writes_nothing(
    client: httpx.Client, db_path: Path, body: dict[str, object], status: int, code: str
) -> None:
    before = count_rows(db_path)
    response = client.post("/api/chat", json=body)
    assert response.status_code == status
    assert response.json()["code"] == code
    assert response.json()["message"]
    assert count_rows(db_path) == before


def test_a_body_that_is_not_json_gets_a_json_error(client: httpx.Client, db_path: Path) -> None:
    before = count_rows(db_path)
    response = client.post("/api/chat", content=b"{not json", headers={"content-type": "application/json"})
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_json"
    assert count_rows(db_path) == before


@pytest.mark.parametrize(
    ("escaped", "why"),
    [(b"half an emoji \\ud83d", "not valid Unicode text"), (b"a NUL \\u0000 inside", "NUL character")],
)
def test_text_no_store_can_hold_gets_a_json_error_and_writes_nothing(
    client: httpx.Client, db_path: Path, escaped: bytes, why: str
) -> None:
    before = count_rows(db_path)
    for stream in (b"false", b"true"):  # JSON may escape either on its own; PostgreSQL refuses both
        body = b'{"query": "' + escaped + b'", "stream": ' + stream + b"}"
        response = client.post("/api/chat", content=body, headers={"content-type": "application/json"})
        assert (response.status_code, response.json()["code"]) == (422, "invalid_request")
        assert why in response.json()["message"]
    assert count_rows(db_path) == before


def test_a_body_nested_too_deep_to_parse_gets_a_json_error(client: httpx.Client, db_path: Path) -> None:
    before = count_rows(db_path)
    body = b'{"query": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    response = client.post("/api/chat", content=body, headers={"content-type": "application/json"})
    assert (response.status_code, response.json()["code"]) == (400, "malformed_request")
    assert count_rows(db_path) == before


def test_unknown_ids_are_not_found(client: httpx.Client) -> None:
    for url in ("/api/conversations/nope/messages", "/api/messages/nope/thoughts"):
        response = client.get(url)
        assert response.status_code == 404
        assert response.json()["code"] == "not_found"


def test_health_names_the_offline_model(client: httpx.Client) -> None:
    assert client.get("/healthz").json() == {"status": "ok", "model": "offline-scripted"}
