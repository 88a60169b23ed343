"""Agents as data over real HTTP, on SQLite and on PostgreSQL: the agent API, and the entry points
that choose the config a turn runs (the debugger: the draft; the API: the active or a pinned version)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from infrastructure.persistence.migrate import run_migrations
from tests.integration.backends import pg_url, throwaway_pg_database
from tests.integration.http_answers import ok
from tests.integration.streaming_helpers import serving
from tests.service import Service

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def service(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    folder = tmp_path_factory.mktemp(f"agents-{request.param}")
    if request.param == "sqlite":
        with serving({"MEMAGENT_DATABASE__URL": f"sqlite+aiosqlite:///{Path(folder) / 'memagent.db'}"}, folder) as s:
            yield s
        return
    with throwaway_pg_database() as name:
        run_migrations(pg_url(name))
        with serving({"MEMAGENT_DATABASE__URL": pg_url(name)}, folder) as s:
            yield s


@pytest.fixture
def client(service: Service) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=service.base_url, timeout=30) as http:
        yield http


def system_prompt(client: httpx.Client, message_id: str) -> str:
    steps = ok(client.get(f"/api/messages/{message_id}/thoughts"))["data"]
    prompt = json.loads([s for s in steps if s["message"]][-1]["message"])
    return str(prompt[0]["content"][0]["text"])


def test_the_default_agent_is_published_at_start_and_answers_without_an_agent_id(client: httpx.Client) -> None:
    default = ok(client.get("/api/agents/default"))
    assert (default["active_version"], default["managed_by_settings"]) == (1, True)
    [first] = ok(client.get("/api/agents/default/versions"))["data"]
    assert first["note"] == "Created from the MEMAGENT_AGENT__* settings."
    answer = ok(client.post("/api/chat", json={"query": "hello"}))
    assert answer["status"] == "normal"
    thoughts = ok(client.get(f"/api/messages/{answer['message_id']}/thoughts"))
    assert (thoughts["agent_id"], thoughts["agent_version"], thoughts["entry_point"]) == ("default", 1, "api")


def test_the_debugger_runs_the_draft_while_chat_runs_the_published_version_or_a_pinned_one(
    client: httpx.Client,
) -> None:
    made = ok(client.post("/api/agents", json={"name": "Ada", "config": {"preset_prompt": "You are Ada v1."}}), 201)
    agent = made["id"]
    assert made["draft"]["revision"] == 1
    assert made["draft"]["config"]["memory"]["dialog_round"] == 10  # completed with the defaults
    unpublished = client.post("/api/chat", json={"query": "hi", "agent_id": agent})
    assert (unpublished.status_code, unpublished.json()["code"]) == (409, "not_published")
    v1 = ok(client.post(f"/api/agents/{agent}/publish", json={"note": "first"}), 201)
    assert (v1["version"], v1["note"]) == (1, "first")
    v2_config = {"preset_prompt": "You are Ada v2."}
    saved = ok(client.put(f"/api/agents/{agent}/draft", json={"revision": 1, "config": v2_config}))
    assert saved["revision"] == 2

    debug = ok(client.post(f"/api/agents/{agent}/debug/chat", json={"query": "who are you?"}))
    published = ok(client.post("/api/chat", json={"query": "who are you?", "agent_id": agent}))
    assert "You are Ada v2." in system_prompt(client, debug["message_id"])
    assert "You are Ada v1." in system_prompt(client, published["message_id"])
    ran = ok(client.get(f"/api/messages/{debug['message_id']}/thoughts"))
    assert (ran["agent_id"], ran["agent_version"], ran["draft_revision"]) == (agent, None, 2)
    assert ran["entry_point"] == "debugger"

    ok(client.post(f"/api/agents/{agent}/publish", json={"note": "second"}), 201)
    latest = ok(client.post("/api/chat", json={"query": "and now?", "agent_id": agent}))
    pinned = ok(client.post("/api/chat", json={"query": "and then?", "agent_id": agent, "version": 1}))
    assert "You are Ada v2." in system_prompt(client, latest["message_id"])
    assert "You are Ada v1." in system_prompt(client, pinned["message_id"])
    listed = ok(client.get(f"/api/conversations/{pinned['conversation_id']}/messages"))["data"]
    assert (listed[0]["agent_id"], listed[0]["agent_version"], listed[0]["entry_point"]) == (agent, 1, "api")
    # A debug conversation takes debugger turns only, and a published one published turns only.
    mixed = client.post("/api/chat", json={"query": "x", "conversation_id": debug["conversation_id"]})
    assert mixed.status_code == 409, mixed.text  # a conflict with that conversation


def test_versions_diff_restore_activate_and_archive(client: httpx.Client) -> None:
    agent = ok(client.post("/api/agents", json={"name": "Bo", "config": {"preset_prompt": "one"}}), 201)["id"]
    ok(client.post(f"/api/agents/{agent}/publish"), 201)
    ok(client.put(f"/api/agents/{agent}/draft", json={"revision": 1, "config": {"preset_prompt": "two"}}))
    ok(client.post(f"/api/agents/{agent}/publish"), 201)
    assert [v["version"] for v in ok(client.get(f"/api/agents/{agent}/versions"))["data"]] == [2, 1]
    assert ok(client.get(f"/api/agents/{agent}/versions/1"))["config"]["preset_prompt"] == "one"
    assert ok(client.get(f"/api/agents/{agent}/versions/1/diff/2"))["data"] == [
        {"field": "preset_prompt", "a": "one", "b": "two"}
    ]
    assert ok(client.post(f"/api/agents/{agent}/versions/1/activate"))["active_version"] == 1
    answer = ok(client.post("/api/chat", json={"query": "which?", "agent_id": agent}))
    assert "one" in system_prompt(client, answer["message_id"])
    restored = ok(client.post(f"/api/agents/{agent}/versions/1/restore"))
    assert (restored["revision"], restored["config"]["preset_prompt"]) == (3, "one")
    assert client.get(f"/api/agents/{agent}/versions/9").status_code == 404
    archived = ok(client.delete(f"/api/agents/{agent}"))
    assert archived["status"] == "archived"
    assert ok(client.get(f"/api/conversations/{answer['conversation_id']}/messages"))["data"]  # still readable
    for refused in (client.post("/api/chat", json={"query": "x", "agent_id": agent}),
                    client.put(f"/api/agents/{agent}/draft", json={"revision": 3, "config": {}}),
                    client.post(f"/api/agents/{agent}/publish")):
        assert refused.status_code == 409, refused.text
    assert ok(client.patch(f"/api/agents/{agent}", json={"status": "active"}))["status"] == "active"


def test_bad_input_is_refused_clearly(client: httpx.Client) -> None:
    unknown = client.post("/api/agents", json={"name": "C", "config": {"colour": "red", "memory": {"depth": 1}}})
    assert unknown.status_code == 422
    assert "colour: unknown field" in unknown.json()["message"]
    assert "memory.depth: unknown field" in unknown.json()["message"]
    agent = ok(client.post("/api/agents", json={"name": "C", "config": {"tools": ["teleport"], "model": "gpt-9"}}), 201)
    invalid = client.post(f"/api/agents/{agent['id']}/publish")
    assert invalid.status_code == 422
    assert "no tool named 'teleport'" in invalid.json()["message"]
    assert "no model profile named 'gpt-9'" in invalid.json()["message"]
    stale = client.put(f"/api/agents/{agent['id']}/draft", json={"revision": 7, "config": {}})
    assert (stale.status_code, stale.json()["code"]) == (409, "conflict")
    huge_config = {"preset_prompt": "x" * 300_000}  # over 256 KiB
    huge = client.put(f"/api/agents/{agent['id']}/draft", json={"revision": 1, "config": huge_config})
    assert huge.status_code == 413
    assert client.get("/api/agents/nope").status_code == 404
    assert client.put("/api/agents/default/draft", json={"revision": 1, "config": {}}).status_code == 409
