"""The conversations API over real HTTP, on SQLite (memory in process) and on PostgreSQL with the
memory in Redis: end users, the list, rename and pin, delete (which forgets the memory), feedback
and regenerate."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis

from tests.integration.backends import shared_redis_url
from tests.integration.http_answers import ok, refused
from tests.integration.streaming_helpers import (
    finished_message,
    long_query,
    open_sse,
    scripted_answer,
    serving,
    shared_backends,
    wait_until,
)
from tests.service import Service

pytestmark = pytest.mark.integration

CHUNK_DELAY = 0.02


@pytest.fixture(scope="module", params=["sqlite", "postgresql+redis"])
def service(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    folder = tmp_path_factory.mktemp("conversations")
    slow = {"MEMAGENT_LLM__SCRIPTED_CHUNK_DELAY": str(CHUNK_DELAY)}  # so a long answer is still running
    if request.param == "sqlite":
        sqlite = {"MEMAGENT_DATABASE__URL": f"sqlite+aiosqlite:///{Path(folder) / 'memagent.db'}"}
        with serving(sqlite | slow, folder) as s:
            s.db_path = Path(folder) / "memagent.db"  # type: ignore[attr-defined]
            yield s
        return
    with shared_backends(slow) as env, serving(env, folder) as s:
        s.env = env  # type: ignore[attr-defined]
        yield s


@pytest.fixture
def client(service: Service) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=service.base_url, timeout=30) as http:
        yield http


def chat(client: httpx.Client, query: str, user: str | None, conversation_id: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"query": query}
    if user is not None:
        body["user"] = user
    if conversation_id is not None:
        body["conversation_id"] = conversation_id
    return ok(client.post("/api/chat", json=body))


def listed(client: httpx.Client, **params: Any) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = ok(client.get("/api/conversations", params=params))["data"]
    return rows


def test_each_end_user_lists_only_their_own_conversations_and_the_account_lists_all(client: httpx.Client) -> None:
    ann = chat(client, "hello from ann", "ann-1")
    ben = chat(client, "hello from ben", "ben-1")
    ann_rows = listed(client, user="ann-1")
    assert [r["id"] for r in ann_rows] == [ann["conversation_id"]]
    row = ann_rows[0]
    assert (row["user"], row["agent_id"], row["message_count"], row["pinned"]) == ("ann-1", "default", 1, False)
    assert row["last_message"]["preview"] == scripted_answer("hello from ann")
    everyone = [r["id"] for r in listed(client, limit=100)]
    assert {ann["conversation_id"], ben["conversation_id"]} <= set(everyone)
    # Ann cannot continue Ben's conversation: it does not exist for her.
    foreign = client.post("/api/chat", json={"query": "hi", "user": "ann-1", "conversation_id": ben["conversation_id"]})
    refused(foreign, 404, "not_found")
    assert ok(client.get(f"/api/conversations/{ben['conversation_id']}"))["user"] == "ben-1"  # the account sees all
    refused(client.get(f"/api/conversations/{ben['conversation_id']}", params={"user": "ann-1"}), 404, "not_found")


def test_without_user_the_account_chats_as_itself(client: httpx.Client) -> None:
    mine = chat(client, "no user here", None)
    row = ok(client.get(f"/api/conversations/{mine['conversation_id']}"))
    assert row["user"] is None  # the account itself


def test_the_list_is_newest_activity_first_and_pages_by_cursor(client: httpx.Client) -> None:
    user = "pager"
    made = [chat(client, f"topic {n}", user)["conversation_id"] for n in range(5)]
    chat(client, "back to the first", user, made[0])
    first = ok(client.get("/api/conversations", params={"user": user, "limit": 2}))
    assert [r["id"] for r in first["data"]] == [made[0], made[4]]
    assert first["has_more"] is True
    seen = [r["id"] for r in first["data"]]
    cursor = first["next_cursor"]
    while cursor:
        page = ok(client.get("/api/conversations", params={"user": user, "limit": 2, "cursor": cursor}))
        seen += [r["id"] for r in page["data"]]
        cursor = page["next_cursor"]
    assert seen == [made[0], made[4], made[3], made[2], made[1]]
    assert listed(client, user=user, limit=100)[0]["message_count"] == 2


def test_a_malformed_cursor_is_400_and_a_bad_user_is_422(client: httpx.Client) -> None:
    refused(client.get("/api/conversations", params={"cursor": "bm90LWEtY3Vyc29y"}), 400, "malformed_request")
    refused(client.get("/api/conversations", params={"cursor": "***"}), 400, "malformed_request")
    refused(client.get("/api/conversations", params={"user": "u" * 257}), 422)
    refused(client.post("/api/chat", json={"query": "hi", "user": "u" * 257}), 422)
    refused(client.post("/api/chat", content=b'{"query": "hi", "user": "nul\\u0000"}',
                        headers={"content-type": "application/json"}), 422)
    refused(client.post("/api/chat", content=b'{"query": "hi", "user": "half \\ud83d"}',
                        headers={"content-type": "application/json"}), 422)
    refused(client.post("/api/chat", json={"query": "hi", "user": ""}), 422)


def test_search_finds_titles_and_messages_and_filters_combine(client: httpx.Client) -> None:
    user = "searcher"
    paris = chat(client, "Plan a weekend in Paris", user)["conversation_id"]
    rome = chat(client, "Best pasta near the Colosseum", user)["conversation_id"]
    ok(client.patch(f"/api/conversations/{rome}", json={"title": "Rome trip", "pinned": True}))

    assert [r["id"] for r in listed(client, user=user, q="paris")] == [paris]  # in a query
    assert [r["id"] for r in listed(client, user=user, q="ROME")] == [rome]  # in a title
    assert [r["id"] for r in listed(client, user=user, pinned=True)] == [rome]
    assert [r["id"] for r in listed(client, user=user, pinned=False, q="weekend")] == [paris]
    assert listed(client, user=user, agent_id="another-agent") == []


def test_a_title_set_by_hand_wins_over_auto_titling(client: httpx.Client) -> None:
    turn = chat(client, "Tell me about the northern lights in winter", "titler")
    conversation = turn["conversation_id"]
    auto = wait_until(lambda: ok(client.get(f"/api/conversations/{conversation}"))["title"], 10, "an auto title")
    assert auto.lower().startswith("tell me about")
    renamed = ok(client.patch(f"/api/conversations/{conversation}", json={"title": "  Aurora  "}))
    assert renamed["title"] == "Aurora"
    chat(client, "and in summer?", "titler", conversation)
    assert ok(client.get(f"/api/conversations/{conversation}"))["title"] == "Aurora"
    refused(client.patch(f"/api/conversations/{conversation}", json={"title": "   "}), 422)
    refused(client.patch(f"/api/conversations/{conversation}", json={"title": "x" * 201}), 422)


def test_feedback_is_shown_on_the_message_replaced_and_cleared(client: httpx.Client) -> None:
    turn = chat(client, "rate this", "rater")
    url = f"/api/messages/{turn['message_id']}/feedback"
    ok(client.post(url, json={"rating": "dislike", "note": "too short", "user": "rater"}))
    liked = ok(client.post(url, json={"rating": "like", "user": "rater"}))
    assert liked["feedback"] == {"rating": "like", "note": ""}
    stored = finished_message(client, turn["conversation_id"], turn["message_id"])
    assert stored["feedback"] == {"rating": "like", "note": ""}
    ok(client.post(url, json={"rating": None}))  # the account may rate any of its end users' answers
    assert finished_message(client, turn["conversation_id"], turn["message_id"])["feedback"]["rating"] is None
    refused(client.post(url, json={"rating": "love"}), 422)
    refused(client.post(url, json={"rating": "like", "user": "someone-else"}), 404, "not_found")


def test_regenerate_answers_the_latest_turn_again_and_memory_keeps_only_the_newest(client: httpx.Client) -> None:
    first = chat(client, "My name is Ada.", "regen")
    conversation = first["conversation_id"]
    second = chat(client, "What is my name?", "regen", conversation)
    again = ok(client.post(f"/api/messages/{second['message_id']}/regenerate", json={"user": "regen"}))
    assert again["status"] == "normal"
    assert again["conversation_id"] == conversation
    messages = ok(client.get(f"/api/conversations/{conversation}/messages"))["data"]
    assert [(m["id"], m["parent_message_id"], m["superseded"]) for m in messages] == [
        (first["message_id"], None, False), (second["message_id"], None, True),
        (again["message_id"], second["message_id"], False),
    ]
    assert messages[2]["query"] == "What is my name?"
    # The next turn's prompt holds the newest sibling only: the replaced answer is not in it twice.
    third = chat(client, "Thanks!", "regen", conversation)
    steps = ok(client.get(f"/api/messages/{third['message_id']}/thoughts"))["data"]
    prompt = json.loads(next(s["message"] for s in steps if s["message"]))
    said = [m["content"][0]["text"] for m in prompt if m["role"] == "user"]
    assert said == ["My name is Ada.", "What is my name?", "Thanks!"]
    answers = [m["content"][0]["text"] for m in prompt if m["role"] == "assistant"]
    assert answers[-1] == again["answer"]
    # Only the latest message can be answered again.
    older = client.post(f"/api/messages/{second['message_id']}/regenerate", json={})
    assert "latest" in refused(older, 409, "conflict")


def test_regenerate_streams_like_chat_and_a_running_turn_cannot_be_regenerated(client: httpx.Client) -> None:
    turn = chat(client, "short one", "streamer")
    with open_sse(client, "POST", f"/api/messages/{turn['message_id']}/regenerate",
                  json={"stream": True, "user": "streamer"}) as regenerated:
        end = regenerated.until_event("agent_end")
    assert end.data["conversation_id"] == turn["conversation_id"]
    with open_sse(client, "POST", "/api/chat", json={
        "query": long_query(600), "stream": True, "user": "streamer", "conversation_id": turn["conversation_id"],
    }) as running:
        running.nth_message(1)
        running_id = running.first_data()["message_id"]
        busy = client.post(f"/api/messages/{running_id}/regenerate", json={"user": "streamer"})
        refused(busy, 409, "conflict")
        ok(client.post(f"/api/tasks/{running.first_data()['task_id']}/stop", params={"user": "streamer"}))


def _memory_keys(service: Service, conversation_id: str) -> list[str]:
    env = getattr(service, "env", None)
    if env is None:
        return []
    client = redis.Redis.from_url(shared_redis_url(), decode_responses=True)
    try:
        pattern = f"{env['MEMAGENT_REDIS__KEY_PREFIX']}*{conversation_id}*"
        # <prefix>:<kind>:<conversation>; the upkeep ledger stays (it records when memory was forgotten).
        return [k for k in client.scan_iter(match=pattern, count=500) if not k.split(":")[-2].startswith("upkeep")]
    finally:
        client.close()


def test_delete_stops_the_running_turn_forgets_the_memory_and_the_conversation_is_gone(
    service: Service, client: httpx.Client,
) -> None:
    turn = chat(client, "Remember that I like tea.", "deleter")
    conversation = turn["conversation_id"]
    if getattr(service, "env", None) is not None:
        assert wait_until(lambda: _memory_keys(service, conversation), 10, "the memory to be written")
    with open_sse(client, "POST", "/api/chat", json={
        "query": long_query(600), "stream": True, "user": "deleter", "conversation_id": conversation,
    }) as running:
        running.nth_message(1)
        running_message = running.first_data()["message_id"]
        deleted = client.delete(f"/api/conversations/{conversation}", params={"user": "deleter"})
        assert deleted.status_code == 204, deleted.text
        running.rest()
    assert "stop" in running.events
    db_path = getattr(service, "db_path", None)
    if db_path is not None:  # the record stays, as the stop left it
        with sqlite3.connect(db_path) as db:
            row = db.execute("SELECT status FROM messages WHERE id = ?", (running_message,)).fetchone()
            gone = db.execute(
                "SELECT deleted_at IS NOT NULL FROM conversations WHERE id = ?", (conversation,)
            ).fetchone()
        assert (row, gone) == (("stop",), (1,))

    refused(client.get(f"/api/conversations/{conversation}"), 404, "not_found")
    refused(client.get(f"/api/conversations/{conversation}/messages"), 404, "not_found")
    refused(client.get(f"/api/messages/{running_message}/thoughts"), 404, "not_found")
    refused(client.get(f"/api/conversations/{conversation}/memory"), 404, "not_found")
    refused(client.post("/api/chat", json={"query": "still there?", "conversation_id": conversation}), 404, "not_found")
    refused(client.delete(f"/api/conversations/{conversation}"), 404, "not_found")
    assert conversation not in [r["id"] for r in listed(client, limit=100)]
    assert _memory_keys(service, conversation) == []
