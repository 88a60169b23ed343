"""Two end users of one agent key, over real HTTP, on SQLite and on PostgreSQL + Redis: each
reaches only their own conversations. Every foreign read, rename, delete, rating, regeneration,
stop or follow is a 404, the same answer as for an id that does not exist, and changes nothing."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.integration.http_answers import ok
from tests.integration.streaming_helpers import long_query, open_sse, serving, shared_backends
from tests.service import Service

pytestmark = pytest.mark.integration


@dataclass
class World:
    service: Service
    agent: str
    other_agent: str
    key: str


def published_agent(http: httpx.Client, name: str) -> str:
    agent = str(ok(http.post("/api/agents", json={"name": name, "config": {}}), 201)["id"])
    ok(http.post(f"/api/agents/{agent}/publish", json={}), 201)
    return agent


@pytest.fixture(scope="module", params=["sqlite", "postgresql+redis"])
def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    folder = tmp_path_factory.mktemp("isolation")
    slow = {"MEMAGENT_LLM__SCRIPTED_CHUNK_DELAY": "0.02"}  # so a long answer is still running

    def build(service: Service) -> World:
        with httpx.Client(base_url=service.base_url, timeout=30) as http:  # the local account
            agent, other = published_agent(http, "Shop helper"), published_agent(http, "Other")
            key = ok(http.post(f"/api/agents/{agent}/keys", json={"name": "web page"}), 201)["key"]
        return World(service, agent, other, key)

    if request.param == "sqlite":
        env = {"MEMAGENT_DATABASE__URL": f"sqlite+aiosqlite:///{Path(folder) / 'memagent.db'}"} | slow
        with serving(env, folder) as service:
            yield build(service)
        return
    with shared_backends(slow) as env, serving(env, folder) as service:
        yield build(service)


@pytest.fixture
def http(world: World) -> Iterator[httpx.Client]:
    headers = {"Authorization": f"Bearer {world.key}"}
    with httpx.Client(base_url=world.service.base_url, timeout=30, headers=headers) as client:
        yield client


def not_found(response: httpx.Response) -> None:
    assert (response.status_code, response.json()["code"]) == (404, "not_found"), response.text


def foreign_requests(user: str, conversation: str, message: str, task: str) -> list[tuple[str, str, dict[str, Any]]]:
    """Every way to reach someone's conversation, message or task, as `user`."""
    params = {"user": user}
    return [
        ("GET", f"/api/conversations/{conversation}", {"params": params}),
        ("GET", f"/api/conversations/{conversation}/messages", {"params": params}),
        ("PATCH", f"/api/conversations/{conversation}", {"params": params, "json": {"title": "mine", "pinned": True}}),
        ("DELETE", f"/api/conversations/{conversation}", {"params": params}),
        ("GET", f"/api/messages/{message}/thoughts", {"params": params}),
        ("POST", f"/api/messages/{message}/feedback", {"json": {"rating": "dislike", "user": user}}),
        ("POST", f"/api/messages/{message}/regenerate", {"json": {"user": user}}),
        ("GET", f"/api/messages/{message}/suggested", {"params": params}),
        ("POST", f"/api/tasks/{task}/stop", {"params": params}),
        ("GET", f"/api/tasks/{task}/events", {"params": params}),
        ("POST", "/api/chat", {"json": {"query": "let me in", "user": user, "conversation_id": conversation}}),
    ]


def test_another_end_user_of_the_same_key_reaches_nothing_of_ann_s(http: httpx.Client, world: World) -> None:
    ann = ok(http.post("/api/chat", json={"query": "my order is #1234", "user": "ann"}))
    with open_sse(http, "POST", "/api/chat", json={
        "query": long_query(600), "stream": True, "user": "ann", "conversation_id": ann["conversation_id"],
    }) as running:
        running.nth_message(1)
        task = running.first_data()["task_id"]
        for method, url, kwargs in foreign_requests("ben", ann["conversation_id"], ann["message_id"], task):
            not_found(http.request(method, url, **kwargs))
        ok(http.post(f"/api/tasks/{task}/stop", params={"user": "ann"}))  # Ann's own stop works
        running.rest()

    ben_list = ok(http.get("/api/conversations", params={"user": "ben"}))["data"]
    assert ann["conversation_id"] not in [c["id"] for c in ben_list]
    # Nothing Ben sent changed anything of Ann's.
    mine = ok(http.get(f"/api/conversations/{ann['conversation_id']}", params={"user": "ann"}))
    assert (mine["title"] != "mine", mine["pinned"], mine["message_count"]) == (True, False, 2)
    messages = ok(http.get(f"/api/conversations/{ann['conversation_id']}/messages", params={"user": "ann"}))["data"]
    assert [m["feedback"]["rating"] for m in messages] == [None, None]
    assert [m["parent_message_id"] for m in messages] == [None, None]


def test_a_guessed_id_answers_exactly_as_a_foreign_one(http: httpx.Client) -> None:
    ann = ok(http.post("/api/chat", json={"query": "hello", "user": "ann"}))
    guess = uuid.uuid4().hex
    for (method, url, kwargs), (_, guessed_url, guessed_kwargs) in zip(
        foreign_requests("ben", ann["conversation_id"], ann["message_id"], ann["task_id"]),
        foreign_requests("ben", guess, guess, guess), strict=True,
    ):
        foreign, guessed = http.request(method, url, **kwargs), http.request(method, guessed_url, **guessed_kwargs)
        not_found(foreign)
        not_found(guessed)
        assert foreign.json()["message"].replace(ann["conversation_id"], "?").replace(ann["message_id"], "?") \
            .replace(ann["task_id"], "?") == guessed.json()["message"].replace(guess, "?")


def test_an_agent_key_needs_a_user_and_keeps_to_its_agent(http: httpx.Client, world: World) -> None:
    for response in (
        http.post("/api/chat", json={"query": "hi"}),
        http.get("/api/conversations"),
        http.post("/api/chat", json={"query": "hi", "user": "ann", "agent_id": world.other_agent}),
        http.get(f"/api/agents/{world.other_agent}/parameters"),
    ):
        assert (response.status_code, response.json()["code"]) == (403, "forbidden"), response.text
    # The account's own conversations with the other agent are not the key's either.
    with httpx.Client(base_url=world.service.base_url, timeout=30) as account:
        other = ok(account.post("/api/chat", json={"query": "hi", "user": "ann", "agent_id": world.other_agent}))
    not_found(http.get(f"/api/conversations/{other['conversation_id']}", params={"user": "ann"}))
    listed = ok(http.get("/api/conversations", params={"user": "ann", "limit": 100}))["data"]
    assert {c["agent_id"] for c in listed} == {world.agent}


def test_an_agent_key_reaches_neither_the_account_s_own_nor_the_debugger_s_conversations(
    http: httpx.Client, world: World,
) -> None:
    with httpx.Client(base_url=world.service.base_url, timeout=30) as account:
        own = ok(account.post("/api/chat", json={"query": "the account itself", "agent_id": world.agent}))
        debug = ok(account.post(f"/api/agents/{world.agent}/debug/chat", json={"query": "draft", "user": "ann"}))
    for user in ("local", "ann"):  # the account's own id, and the end user the builder debugged as
        listed = ok(http.get("/api/conversations", params={"user": user, "include_debug": "true", "limit": 100}))
        ids = {c["id"] for c in listed["data"]}
        assert own["conversation_id"] not in ids
        assert debug["conversation_id"] not in ids
    not_found(http.get(f"/api/conversations/{own['conversation_id']}", params={"user": "local"}))
    not_found(http.get(f"/api/conversations/{debug['conversation_id']}", params={"user": "ann"}))
    not_found(http.post(f"/api/messages/{debug['message_id']}/regenerate", json={"user": "ann"}))
    not_found(http.get(f"/api/messages/{debug['message_id']}/thoughts", params={"user": "ann"}))


def test_an_agent_key_reads_its_user_s_steps_without_the_builder_s_prompt(http: httpx.Client) -> None:
    turn = ok(http.post("/api/chat", json={"query": "what do you know?", "user": "ann"}))
    steps = ok(http.get(f"/api/messages/{turn['message_id']}/thoughts", params={"user": "ann"}))["data"]
    assert steps
    assert all(step["message"] == "" for step in steps)
