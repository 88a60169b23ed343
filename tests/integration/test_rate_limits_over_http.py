"""Rate limits and quotas over real HTTP, on two `memagent serve` workers sharing PostgreSQL and Redis:
turns per minute of a key, concurrent turns of an agent (free again after a normal end, a stop, and a
killed worker's lease), tokens per day, 429 `rate_limited` with `Retry-After` (OpenAI's shape under
`/v1`), the refusal counted in /metrics; and the embedded default (one process, no Redis).

Every scripted turn is slow (`MEMAGENT_LLM__SCRIPTED_CHUNK_DELAY`), so a long query runs while a test
acts on the other worker."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.test_keys_and_owners import Key, create_key
from tests.integration.http_answers import ok
from tests.integration.streaming_helpers import (
    long_query,
    open_sse,
    running_services,
    serving,
    shared_backends,
    wait_until,
)
from tests.service import Service

pytestmark = pytest.mark.integration

LEASE = 2.0
LIMITS = {
    "MEMAGENT_AUTH__REQUIRE_KEYS": "true",
    "MEMAGENT_LLM__SCRIPTED_CHUNK_DELAY": "0.05",
    "MEMAGENT_TURN__STOP_CHECK_INTERVAL": "0.05",
    "MEMAGENT_LIMITS__KEY_RPM": "3",
    "MEMAGENT_LIMITS__LEASE": str(LEASE),
}
USER = "end-user-5e1f"


@dataclass(frozen=True)
class Workers:
    a: Service
    b: Service
    alice: Key
    env: dict[str, str]
    folder: Path


@pytest.fixture(scope="module")
def workers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workers]:
    folder = tmp_path_factory.mktemp("rate-limits")
    with shared_backends(LIMITS) as env:
        alice = create_key(env["MEMAGENT_DATABASE__URL"], "alice")
        with running_services([env, env], folder) as (a, b):
            yield Workers(a, b, alice, env, folder)


def client(service: Service, raw: str) -> httpx.Client:
    return httpx.Client(base_url=service.base_url, timeout=30, headers={"Authorization": f"Bearer {raw}"})


def agent_with_keys(workers: Workers, name: str, limits: dict[str, int], keys: int) -> tuple[str, list[str]]:
    """A published agent with `limits` in its config, and `keys` agent keys of it (raw)."""
    with client(workers.a, workers.alice.raw) as http:
        agent = ok(http.post("/api/agents", json={"name": name, "config": {"limits": limits}}), 201)["id"]
        ok(http.post(f"/api/agents/{agent}/publish"), 201)
        raws = [ok(http.post(f"/api/agents/{agent}/keys", json={"name": f"k{n}"}), 201)["key"] for n in range(keys)]
    return agent, raws


def turn(http: httpx.Client, query: str = "hello") -> httpx.Response:
    return http.post("/api/chat", json={"query": query, "user": USER})


def refused(response: httpx.Response, limit_words: str) -> dict[str, Any]:
    assert response.status_code == 429, response.text
    body: dict[str, Any] = response.json()
    assert body["code"] == "rate_limited"
    assert limit_words in body["message"]
    assert USER not in body["message"]
    assert "mk_" not in body["message"]
    return body


def retry_after(response: httpx.Response) -> int:
    return int(response.headers["Retry-After"])


def limited_count(service: Service, alice: Key, limit: str, scope: str) -> float:
    with client(service, alice.raw) as http:
        page = http.get("/metrics")
    assert page.status_code == 200, page.text
    line = f'memagent_rate_limited_total{{limit="{limit}",scope="{scope}"}}'
    return next((float(row.split()[-1]) for row in page.text.splitlines() if row.startswith(line)), 0.0)


def test_a_keys_turns_per_minute_are_counted_across_workers_and_refused_with_retry_after(
    workers: Workers,
) -> None:
    _, [raw] = agent_with_keys(workers, "Open", {}, 1)
    before = limited_count(workers.b, workers.alice, "rpm", "key")
    with client(workers.a, raw) as on_a, client(workers.b, raw) as on_b:
        for http in (on_a, on_b, on_a):
            ok(turn(http))
        answer = turn(on_b)
        refused(answer, "This API key has reached its limit of turns per minute (3)")
        assert 1 <= retry_after(answer) <= 60
        assert raw not in answer.text
        # Reading is no turn: the key still lists its end user's conversations.
        assert on_b.get("/api/conversations", params={"user": USER}).status_code == 200
    assert limited_count(workers.b, workers.alice, "rpm", "key") == before + 1


def test_an_agents_second_concurrent_turn_is_refused_until_the_first_ends_or_stops(workers: Workers) -> None:
    _, [first, second] = agent_with_keys(workers, "Solo", {"concurrent_turns": 1}, 2)
    with client(workers.a, first) as on_a, client(workers.b, second) as on_b, \
            client(workers.a, workers.alice.raw) as owner:
        body = {"query": long_query(150, "slow"), "user": USER, "stream": True}
        with open_sse(on_a, "POST", "/api/chat", json=body) as stream:
            stream.nth_message(1)
            answer = turn(on_b)
            refused(answer, "This agent already runs its limit of concurrent turns (1)")
            assert retry_after(answer) == 1
            ok(owner.post(f"/api/tasks/{stream.first_data()['task_id']}/stop"))
            stream.rest()
            assert "stop" in stream.events
        ok(turn(on_b))  # the stopped turn gave its slot back before its terminal event
        ok(turn(on_a))  # and so did that one, which ended normally
        ok(turn(on_b))


def test_a_killed_workers_slot_is_free_once_its_lease_lapses(workers: Workers) -> None:
    _, [first, second] = agent_with_keys(workers, "Lonely", {"concurrent_turns": 1}, 2)
    with serving(workers.env, workers.folder) as doomed, client(doomed, first) as on_doomed, \
            client(workers.a, second) as on_a:
        body = {"query": long_query(300, "slow"), "user": USER, "stream": True}
        with contextlib.suppress(httpx.HTTPError), open_sse(on_doomed, "POST", "/api/chat", json=body) as stream:
            stream.nth_message(1)
            doomed.process.send_signal(signal.SIGKILL)
            doomed.process.wait()
        refused(turn(on_a), "concurrent turns (1)")
        # Its worker renews the slot no more: it lapses within a lease (and a renewal's delay).
        wait_until(lambda: turn(on_a).status_code == 200, LEASE * 4, "the killed worker's slot to lapse", every=0.3)


def test_an_agents_tokens_per_day_refuse_its_next_turn_once_used_up(workers: Workers) -> None:
    _, [raw] = agent_with_keys(workers, "Thrifty", {"tokens_per_day": 5}, 1)
    with client(workers.a, raw) as on_a, client(workers.b, raw) as on_b:
        done = ok(turn(on_a, "a question worth more than five tokens of answer"))
        messages = ok(on_a.get(f"/api/conversations/{done['conversation_id']}/messages", params={"user": USER}))
        # The turn that crossed the quota ran to its end: the one after it is refused.
        assert messages["data"][0]["total_token_count"] > 5
        answer = turn(on_b)
        refused(answer, "This agent has used its tokens for today (5, UTC)")
        assert 1 <= retry_after(answer) <= 86400


def test_under_v1_a_refusal_takes_openais_shape_with_retry_after(workers: Workers) -> None:
    _, [raw] = agent_with_keys(workers, "Openish", {"rpm": 1}, 1)
    completion = {"model": "Openish", "messages": [{"role": "user", "content": "hi"}], "user": USER}
    with client(workers.a, raw) as on_a, client(workers.b, raw) as on_b:
        assert on_a.post("/v1/chat/completions", json=completion).status_code == 200
        answer = on_b.post("/v1/chat/completions", json=completion)
    assert answer.status_code == 429
    error = answer.json()["error"]
    assert (error["type"], error["code"], error["param"]) == ("rate_limit_error", "rate_limit_exceeded", None)
    assert "This agent has reached its limit of turns per minute (1)" in error["message"]
    assert 1 <= retry_after(answer) <= 60


def test_the_embedded_default_counts_in_process_without_redis(tmp_path: Path) -> None:
    env = {"MEMAGENT_DATABASE__URL": f"sqlite+aiosqlite:///{tmp_path / 'memagent.db'}",
           "MEMAGENT_LIMITS__KEY_RPM": "1", "MEMAGENT_REDIS__URL": "redis://127.0.0.1:1/0"}
    with serving(env, tmp_path) as service, httpx.Client(base_url=service.base_url, timeout=30) as http:
        ok(http.post("/api/chat", json={"query": "hello"}))
        answer = http.post("/api/chat", json={"query": "hello again"})
        refused(answer, "turns per minute (1)")  # single-user mode: requests without a key count as one
