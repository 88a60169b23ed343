"""GET /api/agents/{id}/stats over real HTTP, on SQLite and PostgreSQL: turns run through
/api/chat (and the debugger, which does not count), then the stats match the stored messages.
With keys required: another account's agent is 404, an agent key 403, and the platform's agent
shows each account its own turns only."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from infrastructure.persistence.migrate import run_migrations
from tests.e2e.test_keys_and_owners import create_key
from tests.integration.backends import pg_url, throwaway_pg_database
from tests.integration.http_answers import ok
from tests.integration.streaming_helpers import serving
from tests.service import Service

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def service(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    folder = tmp_path_factory.mktemp(f"stats-{request.param}")
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


def turn(client: httpx.Client, agent: str, query: str, **extra: Any) -> dict[str, Any]:
    answer = ok(client.post("/api/chat", json={"query": query, "agent_id": agent, **extra}))
    assert answer["status"] == "normal", answer
    return answer


def stored(client: httpx.Client, conversation_ids: set[str]) -> list[dict[str, Any]]:
    """Every stored message of those conversations."""
    return [m for c in sorted(conversation_ids)
            for m in ok(client.get(f"/api/conversations/{c}/messages", params={"limit": 100}))["data"]]


def published_agent(client: httpx.Client, name: str) -> str:
    agent = str(ok(client.post("/api/agents", json={"name": name, "config": {"preset_prompt": "v1"}}), 201)["id"])
    ok(client.post(f"/api/agents/{agent}/publish", json={}), 201)
    return agent


def test_the_stats_of_published_turns_match_the_stored_messages_per_day_version_and_in_total(
    client: httpx.Client,
) -> None:
    agent = published_agent(client, "Stats")
    first = turn(client, agent, "hello there")
    turn(client, agent, "and again", conversation_id=first["conversation_id"])
    eve = turn(client, agent, "hi, I am Eve", user="eve")
    ok(client.put(f"/api/agents/{agent}/draft", json={"revision": 1, "config": {"preset_prompt": "v2"}}))
    ok(client.post(f"/api/agents/{agent}/publish", json={}), 201)
    later = turn(client, agent, "version two", user="eve")
    ok(client.post(f"/api/agents/{agent}/debug/chat", json={"query": "the builder testing"}))  # not counted

    messages = stored(client, {first["conversation_id"], eve["conversation_id"], later["conversation_id"]})
    assert len(messages) == 4
    stats = ok(client.get(f"/api/agents/{agent}/stats"))
    total = stats["total"]
    assert (total["messages"], total["conversations"], total["end_users"]) == (4, 3, 2)
    assert total["tokens"] == sum(m["total_token_count"] for m in messages) > 0
    assert total["prompt_tokens"] == sum(m["message_token_count"] for m in messages)
    assert total["cost"] == pytest.approx(sum(m["total_price"] for m in messages))
    assert total["avg_latency"] == pytest.approx(sum(m["latency"] for m in messages) / 4)
    assert 0 < total["avg_first_token_latency"] <= total["avg_latency"]
    assert (total["likes"], total["dislikes"]) == (0, 0)

    assert [(v["version"], v["messages"], v["conversations"]) for v in stats["versions"]] == [(2, 1, 1), (1, 3, 2)]
    assert len(stats["days"]) == 30
    assert stats["days"][-1]["date"] == stats["to"]
    per_day = Counter(datetime.fromisoformat(m["created_at"]).date().isoformat() for m in messages)
    assert {d["date"]: d["messages"] for d in stats["days"] if d["messages"]} == dict(per_day)

    v1 = ok(client.get(f"/api/agents/{agent}/stats", params={"version": 1}))
    assert [v["version"] for v in v1["versions"]] == [1]
    assert (v1["version"], v1["total"]["messages"], v1["total"]["end_users"]) == (1, 3, 2)


def test_a_window_is_two_iso_days_at_most_366_apart_and_a_version_a_number_from_1(client: httpx.Client) -> None:
    agent = published_agent(client, "Windows")
    window = ok(client.get(f"/api/agents/{agent}/stats", params={"from": "2024-01-01", "to": "2024-12-31"}))
    assert (window["from"], window["to"], len(window["days"])) == ("2024-01-01", "2024-12-31", 366)
    assert window["total"]["messages"] == 0
    assert window["total"]["avg_latency"] is None
    for params, code in (
        ({"from": "2026-03-02", "to": "2026-03-01"}, "invalid_input"),
        ({"from": "2025-01-01", "to": "2026-01-02"}, "invalid_input"),
        ({"from": "2026-02-30"}, "invalid_input"),
        ({"to": "yesterday"}, "invalid_request"),
        ({"version": "0"}, "invalid_request"),
    ):
        refused = client.get(f"/api/agents/{agent}/stats", params=params)
        assert (refused.status_code, refused.json()["code"]) == (422, code), (params, refused.text)
    unknown = client.get("/api/agents/nobody/stats")
    assert (unknown.status_code, unknown.json()["code"]) == (404, "not_found")


def test_only_the_agents_owner_reads_its_stats_and_the_platforms_agent_shows_each_account_its_own(
    tmp_path: Path,
) -> None:
    db_url = f"sqlite+aiosqlite:///{tmp_path / 'memagent.db'}"
    env = {"MEMAGENT_DATABASE__URL": db_url, "MEMAGENT_AUTH__REQUIRE_KEYS": "true"}
    alice, bob = create_key(db_url, "alice"), create_key(db_url, "bob")
    with serving(env, tmp_path) as service, httpx.Client(base_url=service.base_url, timeout=30) as http:
        http.headers.update(alice.headers)
        agent = published_agent(http, "Alice's")
        ok(http.post("/api/chat", json={"query": "hello default"}))  # the platform's agent
        foreign = http.get(f"/api/agents/{agent}/stats", headers=bob.headers)
        assert (foreign.status_code, foreign.json()["code"]) == (404, "not_found")
        agent_key = create_key(db_url, "widget", alice.owner, agent=agent)
        barred = http.get(f"/api/agents/{agent}/stats", headers=agent_key.headers)
        assert barred.status_code == 403, barred.text
        assert ok(http.get("/api/agents/default/stats"))["total"]["messages"] == 1
        assert ok(http.get("/api/agents/default/stats", headers=bob.headers))["total"]["messages"] == 0
