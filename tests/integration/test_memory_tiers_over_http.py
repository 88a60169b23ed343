"""The three memory tiers through the running service, on both memory backends, and the memory API.

SQLite + in-process memory, and PostgreSQL + Redis: a conversation whose facts are extracted
(offline rule-based extractor), summarised (extractive) and folded into the archive, read and
corrected through `/api/conversations/{id}/memory`, then forgotten. Upkeep runs after each
turn's end, so the checks wait for it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis

from tests.integration.backends import (
    chat,
    delete_prefix,
    messages_of,
    migrate,
    new_prefix,
    pg_url,
    prompt_of,
    serving,
    shared_redis_url,
    texts,
    throwaway_pg_database,
)
from tests.integration.db_fixtures import sqlite_url
from tests.integration.user_memory_world import account_keys

pytestmark = pytest.mark.integration

SMALL_MEMORY = {
    "MEMAGENT_MEMORY__COMPACT_THRESHOLD": "4",
    "MEMAGENT_MEMORY__COMPACT_BATCH": "2",
    "MEMAGENT_AGENT__DIALOG_ROUND": "2",
    "MEMAGENT_AGENT__TOOLS": "[]",
    # Every value stays the conversation's (tests/integration/test_user_memory_over_http.py: user facts).
    "MEMAGENT_AGENT__USER_MEMORY": "false",
}
SCRIPT = [
    "Hi, my name is Ada and I live in Lisbon.",
    "Book a table for tomorrow.",
    "My favourite colour is teal.",
    "Remind me to renew my passport.",
    "Actually, make it the day after tomorrow.",
]


@dataclass
class Backend:
    env: dict[str, str]
    redis_prefix: str | None = None  # when memory lives in Redis
    alice: dict[str, str] = field(default_factory=dict)  # headers; empty in single-user mode
    bob: dict[str, str] = field(default_factory=dict)


@pytest.fixture(params=["sqlite-inprocess", "postgresql-redis"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    """SQLite + in-process memory with API keys (alice and bob); PostgreSQL + Redis in single-user mode."""
    if request.param == "sqlite-inprocess":
        database = sqlite_url(tmp_path / "memagent.db")
        env = {"MEMAGENT_DATABASE__URL": database, "MEMAGENT_AUTH__REQUIRE_KEYS": "true"}
        yield Backend(env, None, *account_keys(database, "alice", "bob"))
        return
    url = shared_redis_url()
    prefix = new_prefix()
    with throwaway_pg_database() as name:
        migrate(pg_url(name))
        try:
            yield Backend({
                "MEMAGENT_DATABASE__URL": pg_url(name), "MEMAGENT_MEMORY__BACKEND": "redis",
                "MEMAGENT_EVENTS__BACKEND": "redis", "MEMAGENT_REDIS__URL": url, "MEMAGENT_REDIS__KEY_PREFIX": prefix,
            }, prefix)
        finally:
            delete_prefix(url, prefix)


def memory_of(client: httpx.Client, conversation: str) -> dict[str, Any]:
    response = client.get(f"/api/conversations/{conversation}/memory")
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()
    return data


def eventually(client: httpx.Client, conversation: str, ready: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    """The conversation's memory once the upkeep running after the last turn made `ready` true."""
    deadline = time.monotonic() + 15
    while True:
        memory = memory_of(client, conversation)
        if ready(memory) or time.monotonic() > deadline:
            return memory
        time.sleep(0.05)


def current(memory: dict[str, Any]) -> dict[str, str]:
    return {e["type"]: e["value"] for e in memory["entities"]}


def recall_of(client: httpx.Client, message_id: str) -> dict[str, Any]:
    steps = client.get(f"/api/messages/{message_id}/thoughts").json()["data"]
    assert steps[0]["event"] == "long_term_memory_recall"
    observed: dict[str, Any] = json.loads(steps[0]["observation"])
    return observed


def play(client: httpx.Client) -> tuple[str, list[dict[str, Any]]]:
    results = [chat(client, SCRIPT[0])]
    conversation = results[0]["conversation_id"]
    for query in SCRIPT[1:]:
        # The user's thinking time: the previous turn's upkeep has run.
        eventually(client, conversation, lambda m: len(m["summary"]) > 0)
        results.append(chat(client, query, conversation))
    return conversation, results


def test_the_tiers_work_through_the_service_and_the_memory_api(backend: Backend, tmp_path: Path) -> None:
    prefix = backend.redis_prefix
    with serving(backend.env | SMALL_MEMORY, tmp_path) as (_, client):
        client.headers.update(backend.alice)
        unknown_conversations_are_404(client)
        conversation, results = play(client)
        memory = eventually(
            client, conversation,
            lambda m: "day after tomorrow" in current(m).get("date", "") and len(m["archive"]) >= 1,
        )
        # Entities: the latest date replaced the first, which is history; the name and city are there.
        now = current(memory)
        assert now["name"] == "Ada"
        assert now["city"] == "Lisbon"
        assert now["favourite_colour"] == "teal"
        assert now["date"].startswith("the day after tomorrow (")
        date = next(e for e in memory["entities"] if e["type"] == "date")
        assert date["in_prompt"] is True
        assert [h["value"].split(" (")[0] for h in date["history"]] == ["tomorrow"]
        assert date["history"][0]["superseded_at"] == date["updated_at"]
        assert date["source_message_id"] == results[4]["message_id"]
        # The archive names its source messages, which stay in the record.
        [entry] = memory["archive"][:1]
        assert entry["source_message_ids"] == [results[0]["message_id"], results[1]["message_id"]]
        assert "my name is Ada" in entry["summary"]
        assert len(messages_of(client, conversation)) == 5
        assert "Remind me to renew my passport." in memory["summary"]

        # The next prompt holds what was recalled, and the recall event says why.
        intent = memory["intent"]  # the latest task-bearing intent is kept as conversation state
        assert intent in {"inform", "correct", "task", "ask"}
        asked = chat(client, "What should I pack for the dinner?", conversation)
        system = texts(prompt_of(client, asked["message_id"])[0])
        assert f"- intent: {intent}" in system
        assert "- date: the day after tomorrow (" in system
        assert "- date: tomorrow" not in system
        assert "- name: Ada" in system
        assert "Summary of the conversation so far:" in system
        recalled = recall_of(client, asked["message_id"])
        assert recalled["intent"] == intent
        assert {e["type"] for e in recalled["entities"]} >= {"name", "city", "date", "favourite_colour"}
        assert recalled["archive"][0]["source_message_ids"] == entry["source_message_ids"]
        assert "score" in recalled["archive"][0]
        assert recalled["short_term"]["turns"] == 2

        if prefix is not None:  # memory lives in Redis, under the documented keys
            keys = redis.Redis.from_url(shared_redis_url(), decode_responses=True)
            try:
                # The entity hash is a cache: the last turn's upkeep may have dropped it, and a read re-warms it.
                deadline = time.monotonic() + 10
                while keys.hget(f"{prefix}entity:{conversation}", "name") is None and time.monotonic() < deadline:
                    client.get(f"/api/conversations/{conversation}/memory")
                    time.sleep(0.05)
                assert keys.hget(f"{prefix}entity:{conversation}", "name") is not None
                assert keys.hlen(f"{prefix}archive:{conversation}") >= 1
                assert keys.exists(f"{prefix}window:{conversation}")
            finally:
                keys.close()

        # Correct an entity by hand: the prompt follows, the old value is history.
        put = client.put(f"/api/conversations/{conversation}/memory/entities/City", json={"value": "Porto"})
        assert put.status_code == 200, put.text
        assert (put.json()["type"], put.json()["value"], put.json()["source_message_id"]) == ("city", "Porto", None)
        assert [h["value"] for h in put.json()["history"]] == ["Lisbon"]
        moved = chat(client, "Where do I live?", conversation)
        assert "- city: Porto" in texts(prompt_of(client, moved["message_id"])[0])
        if backend.bob:
            someone_elses_memory_is_404(client, conversation, backend.bob)
        bad = {"value": "x", "confidence": 2}
        assert client.put(f"/api/conversations/{conversation}/memory/entities/city", json=bad).status_code == 422
        half_a_pair = b'{"value": "half an emoji \\ud83d"}'  # JSON may escape it alone; no store can hold it
        refused = client.put(f"/api/conversations/{conversation}/memory/entities/city", content=half_a_pair,
                             headers={"content-type": "application/json"})
        assert (refused.status_code, refused.json()["code"]) == (422, "invalid_request")

        # Delete one entity, then forget everything but the record.
        assert client.delete(f"/api/conversations/{conversation}/memory/entities/name").status_code == 204
        assert client.delete(f"/api/conversations/{conversation}/memory/entities/name").status_code == 404
        assert "name" not in current(memory_of(client, conversation))
        assert client.delete(f"/api/conversations/{conversation}/memory").status_code == 204
        forgotten = memory_of(client, conversation)
        assert (forgotten["summary"], forgotten["entities"], forgotten["archive"]) == ("", [], [])
        assert len(messages_of(client, conversation)) == 7
        after = chat(client, "Hello again.", conversation)
        assert recall_of(client, after["message_id"])["entities"] == []


def routes(conversation: str) -> list[tuple[str, str, dict[str, Any] | None]]:
    base = f"/api/conversations/{conversation}/memory"
    return [("GET", base, None), ("PUT", f"{base}/entities/date", {"value": "x"}),
            ("DELETE", f"{base}/entities/name", None), ("DELETE", base, None)]


def unknown_conversations_are_404(client: httpx.Client) -> None:
    for method, path, body in routes("nope"):
        response = client.request(method, path, json=body)
        assert response.status_code == 404, (method, path, response.text)
        assert response.json()["code"] == "not_found"


def someone_elses_memory_is_404(client: httpx.Client, conversation: str, someone_else: dict[str, str]) -> None:
    for method, path, body in routes(conversation):
        response = client.request(method, path, json=body, headers=someone_else)
        assert response.status_code == 404, (method, path, response.text)
    assert current(memory_of(client, conversation))["name"] == "Ada", "nothing was changed"
