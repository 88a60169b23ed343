"""Conversation titles and follow-up questions over real HTTP: with the offline scripted model (the
embedded default, on SQLite and PostgreSQL), and with a model behind the OpenAI protocol (the test
server), whose title and question calls carry their own prompts."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from infrastructure.conversations.llm_writers import FOLLOW_UP_INSTRUCTIONS, TITLE_INSTRUCTIONS
from infrastructure.memory.llm_memory_models import ARCHIVE_INSTRUCTIONS, EXTRACTION_INSTRUCTIONS, SUMMARY_INSTRUCTIONS
from infrastructure.persistence.migrate import run_migrations
from tests.integration.backends import pg_url, throwaway_pg_database
from tests.integration.http_answers import ok
from tests.integration.streaming_helpers import open_chat, serving, wait_until
from tests.llm_server import ScriptedLLMServer
from tests.llm_server_scripts import error, text
from tests.service import Service

pytestmark = pytest.mark.integration

QUERY = "Plan a weekend trip to Lisbon in May please"
# A bound the offline titler never comes near; the terminal event waits only until the title is saved.
WAIT = {"MEMAGENT_TITLES__WAIT": "5"}


def chat(client: httpx.Client, query: str, **body: Any) -> dict[str, Any]:
    return ok(client.post("/api/chat", json={"query": query, **body}))


def agent_with(client: httpx.Client, name: str, **config: Any) -> str:
    agent_id: str = ok(client.post("/api/agents", json={"name": name, "config": config}), 201)["id"]
    ok(client.post(f"/api/agents/{agent_id}/publish"), 201)
    return agent_id


def suggested(client: httpx.Client, message_id: str, **params: str) -> httpx.Response:
    return client.get(f"/api/messages/{message_id}/suggested", params=params)


# --- the offline scripted model ----------------------------------------------------------------


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def offline(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    folder = tmp_path_factory.mktemp(f"titles-{request.param}")
    if request.param == "sqlite":
        env = WAIT | {"MEMAGENT_DATABASE__URL": f"sqlite+aiosqlite:///{Path(folder) / 'memagent.db'}"}
        with serving(env, folder) as service:
            yield service
        return
    with throwaway_pg_database() as name:
        run_migrations(pg_url(name))
        with serving(WAIT | {"MEMAGENT_DATABASE__URL": pg_url(name)}, folder) as service:
            yield service


@pytest.fixture
def client(offline: Service) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=offline.base_url, timeout=30) as http:
        yield http


def test_the_first_answer_names_the_conversation_after_the_first_words_of_its_query(client: httpx.Client) -> None:
    first = chat(client, QUERY)
    assert (first["status"], first["conversation_title"]) == ("normal", "Plan a weekend trip to Lisbon")
    later = chat(client, "And what about June?", conversation_id=first["conversation_id"])
    assert later["conversation_title"] == "Plan a weekend trip to Lisbon"


def test_the_streamed_terminal_event_carries_the_title_and_the_deltas_do_not(client: httpx.Client) -> None:
    with open_chat(client, "Which museums open on Mondays in Lisbon?") as stream:
        stream.rest()
    end = next(f for f in stream.frames if f.event == "agent_end")
    assert end.data["conversation_title"] == "Which museums open on Mondays in"
    assert all("conversation_title" not in f.data for f in stream.frames if f.event == "agent_message")


def test_with_the_flag_on_the_questions_come_from_the_query_and_stay_the_same(client: httpx.Client) -> None:
    agent_id = agent_with(client, "Guide", tools=[], suggested_questions_after_answer=True)
    draft = ok(client.get(f"/api/agents/{agent_id}/versions/1"))["config"]
    assert draft["suggested_questions_after_answer"] is True
    answer = chat(client, "What is the capital of Portugal?", agent_id=agent_id)
    expected = [
        "Can you tell me more about capital Portugal?",
        "What should I know first about capital Portugal?",
        "Can you give an example of capital Portugal?",
    ]
    assert ok(suggested(client, answer["message_id"]))["data"] == expected
    assert ok(suggested(client, answer["message_id"]))["data"] == expected


def test_asking_for_questions_of_an_agent_without_the_flag_is_a_conflict(client: httpx.Client) -> None:
    answer = chat(client, "hello there")
    refused = suggested(client, answer["message_id"])
    assert refused.status_code == 409
    assert refused.json()["code"] == "conflict"
    assert "suggested_questions_after_answer" in refused.json()["message"]


def test_questions_of_a_message_the_viewer_cannot_see_are_not_found(client: httpx.Client) -> None:
    agent_id = agent_with(client, "Helper", tools=[], suggested_questions_after_answer=True)
    answer = chat(client, "What is a sourdough starter?", agent_id=agent_id)
    assert suggested(client, answer["message_id"], user="bob").status_code == 404  # another end user's
    assert suggested(client, "no-such-message").json()["code"] == "not_found"


def test_the_flag_must_be_true_or_false(client: httpx.Client) -> None:
    refused = client.post("/api/agents", json={"name": "Bad", "config": {"suggested_questions_after_answer": "yes"}})
    assert refused.status_code == 422, refused.text


# --- a model behind the OpenAI protocol ------------------------------------------------------------


def first_system_text(body: dict[str, Any]) -> str:
    first = (body.get("messages") or [{}])[0].get("content")
    if isinstance(first, list):
        first = "".join(part.get("text", "") for part in first if isinstance(part, dict))
    return first if isinstance(first, str) else ""


def is_memory_upkeep(body: dict[str, Any]) -> bool:
    """The memory upkeep's calls only (tests/integration/upkeep_calls.py may come to count titles too)."""
    prompts = (SUMMARY_INSTRUCTIONS, ARCHIVE_INSTRUCTIONS, EXTRACTION_INSTRUCTIONS)
    return first_system_text(body).startswith(tuple(p[:40] for p in prompts))


def is_title_call(body: dict[str, Any]) -> bool:
    return first_system_text(body).startswith(TITLE_INSTRUCTIONS[:40])


def is_follow_up_call(body: dict[str, Any]) -> bool:
    return first_system_text(body).startswith(FOLLOW_UP_INSTRUCTIONS[:40])


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return Path(tmp_path_factory.mktemp("titles-llm")) / "memagent.db"


@pytest.fixture(scope="module")
def with_model(shared_server: ScriptedLLMServer, database: Path) -> Iterator[Service]:
    env = WAIT | {
        "MEMAGENT_DATABASE__URL": f"sqlite+aiosqlite:///{database}",
        "MEMAGENT_LLM__PROVIDER": "openai",
        "MEMAGENT_LLM__BASE_URL": shared_server.base_url,
        "MEMAGENT_LLM__API_KEY": "test-key",
        "MEMAGENT_LLM__MAX_RETRIES": "0",
        "MEMAGENT_AGENT__TOOLS": "[]",
    }
    with serving(env, database.parent) as service:
        yield service
    shared_server.answer_aside(None)


@pytest.fixture
def model_client(with_model: Service) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=with_model.base_url, timeout=30) as http:
        yield http


def test_the_model_names_the_conversation_in_the_agent_s_language(
    model_client: httpx.Client, server: ScriptedLLMServer
) -> None:
    server.answer_aside(lambda body: is_memory_upkeep(body) or is_follow_up_call(body))
    agent_id = agent_with(model_client, "Zhong", tools=[], language="zh")
    server.enqueue(text("Lisbon is lovely in May."), text('"里斯本周末之旅"'))
    answer = chat(model_client, QUERY, agent_id=agent_id)
    assert (answer["answer"], answer["conversation_title"]) == ("Lisbon is lovely in May.", "里斯本周末之旅")
    [asked] = [r.body for r in server.chat_requests if is_title_call(r.body)]
    assert "Chinese" in first_system_text(asked)
    assert asked["messages"][1]["content"] == f"User: {QUERY}\nAssistant: Lisbon is lovely in May."
    assert "tools" not in asked


def test_a_failing_title_model_loses_nothing_and_the_next_answer_names_the_conversation(
    model_client: httpx.Client, server: ScriptedLLMServer
) -> None:
    server.answer_aside(lambda body: is_memory_upkeep(body) or is_follow_up_call(body))
    server.enqueue(text("First answer."), error(500))
    first = chat(model_client, "Tell me about Porto")
    assert (first["status"], first["answer"], first["conversation_title"]) == ("normal", "First answer.", None)
    server.enqueue(text("Second answer."), text("Porto Travel Notes"))
    second = chat(model_client, "And its wine?", conversation_id=first["conversation_id"])
    assert (second["answer"], second["conversation_title"]) == ("Second answer.", "Porto Travel Notes")


def cached_follow_ups(database: Path, message_id: str) -> list[str] | None:
    with sqlite3.connect(database) as connection:
        row = connection.execute("SELECT follow_ups FROM messages WHERE id = ?", (message_id,)).fetchone()
    stored = None if row is None or row[0] is None else json.loads(row[0])
    return None if stored is None else list(stored)


def test_the_model_s_questions_are_made_after_the_answer_and_cached_on_its_message(
    model_client: httpx.Client, server: ScriptedLLMServer, database: Path
) -> None:
    server.answer_aside(lambda body: is_memory_upkeep(body) or is_title_call(body))
    agent_id = agent_with(model_client, "Asker", tools=[], suggested_questions_after_answer=True)
    server.enqueue(text("Lisbon is lovely in May."), text("1. What about Porto?\n2. How long should I stay?"))
    answer = chat(model_client, QUERY, agent_id=agent_id)
    questions = wait_until(lambda: cached_follow_ups(database, answer["message_id"]), 15, "the cached questions")
    assert questions == ["What about Porto?", "How long should I stay?"]
    asked = [r for r in server.chat_requests if is_follow_up_call(r.body)]
    assert ok(suggested(model_client, answer["message_id"]))["data"] == questions
    assert [r for r in server.chat_requests if is_follow_up_call(r.body)] == asked, "no second call: cached"


def test_a_turn_that_failed_has_no_questions(model_client: httpx.Client, server: ScriptedLLMServer) -> None:
    server.answer_aside(is_memory_upkeep)
    agent_id = agent_with(model_client, "Failing", tools=[], suggested_questions_after_answer=True)
    server.enqueue(error(500))
    failed = chat(model_client, "This one fails", agent_id=agent_id)
    assert failed["status"] == "error"
    refused = suggested(model_client, failed["message_id"])
    assert (refused.status_code, refused.json()["code"]) == (409, "conflict")
    assert "not a completed turn" in refused.json()["message"]
    assert not [r for r in server.chat_requests if is_follow_up_call(r.body) or is_title_call(r.body)]
