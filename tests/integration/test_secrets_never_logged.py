"""No secret reaches a log line or an event: `memagent serve` on PostgreSQL (its password in the URL)
and a private redis-server that requires a password, with a planted secret in every setting that
holds one (the model key, a profile's key, the embeddings key, the metrics token, account and agent
keys), makes turns that succeed, fail in the model (whose server echoes the key back), fail in a
tool and are stopped; keys are refused, /metrics and /readyz are asked. Then every line the process
wrote, in the text and the JSON format, and every event of those turns (their SSE frames and their
stored steps) is searched for each secret."""

from __future__ import annotations

import json
import secrets
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import redis

from infrastructure.persistence.migrate import run_migrations
from tests.e2e.test_keys_and_owners import create_key
from tests.integration.backends import throwaway_pg_database
from tests.integration.db_fixtures import POSTGRES_SERVER
from tests.integration.streaming_helpers import long_query, open_chat, serving, wait_until
from tests.integration.test_traces_of_a_turn import is_upkeep
from tests.llm_server import ScriptedLLMServer
from tests.llm_server_scripts import call, error, text, tool_calls
from tests.service import Service, free_port

pytestmark = pytest.mark.integration


def planted(kind: str) -> str:
    return f"{kind}-planted-{secrets.token_hex(10)}"


@dataclass(frozen=True)
class Planted:
    llm_key: str = planted("sk-llm")
    profile_key: str = planted("sk-profile")
    embeddings_key: str = planted("sk-embed")
    metrics_token: str = planted("metrics-token")
    pg_password: str = planted("pgpass")
    redis_password: str = planted("redispass")

    def all(self, *more: str) -> list[str]:
        return [self.llm_key, self.profile_key, self.embeddings_key, self.metrics_token, self.pg_password,
                self.redis_password, *more]


@contextmanager
def redis_requiring(password: str, workdir: Path) -> Iterator[str]:
    """A private redis-server on a port of its own that refuses clients without `password`; its URL."""
    port = free_port()
    process = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--requirepass", password, "--dir", str(workdir)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    client = redis.Redis(host="127.0.0.1", port=port, password=password, socket_timeout=2)
    try:
        wait_until(lambda: _answers(client), 10, "the private redis-server")
        yield f"redis://:{password}@127.0.0.1:{port}/0"
    finally:
        client.close()
        process.terminate()
        process.wait(timeout=10)


def _answers(client: redis.Redis) -> bool:
    try:
        return bool(client.ping())
    except (redis.RedisError, OSError):
        return False


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Planted, dict[str, str], ScriptedLLMServer]]:
    secret = Planted()
    folder = tmp_path_factory.mktemp("secrets")
    key_file = folder / "profile.key"
    key_file.write_text(secret.profile_key)
    with (
        ScriptedLLMServer() as llm,
        redis_requiring(secret.redis_password, folder) as redis_url,
        throwaway_pg_database() as database,
    ):
        llm.answer_aside(is_upkeep)  # the upkeep's calls never take a turn's scripted reply
        url = POSTGRES_SERVER.set(database=database, password=secret.pg_password).render_as_string(hide_password=False)
        run_migrations(url)
        profile = {"name": "second", "provider": "openai", "base_url": llm.base_url, "model": "scripted-model",
                   "api_key_file": str(key_file)}
        env = {
            "MEMAGENT_DATABASE__URL": url, "MEMAGENT_REDIS__URL": redis_url,
            "MEMAGENT_MEMORY__BACKEND": "redis", "MEMAGENT_EVENTS__BACKEND": "redis",
            "MEMAGENT_AUTH__REQUIRE_KEYS": "true", "MEMAGENT_METRICS__TOKEN": secret.metrics_token,
            "MEMAGENT_LLM__PROVIDER": "openai", "MEMAGENT_LLM__BASE_URL": llm.base_url,
            "MEMAGENT_LLM__API_KEY": secret.llm_key, "MEMAGENT_LLM__MODEL": "scripted-model",
            "MEMAGENT_LLM__MAX_RETRIES": "0", "MEMAGENT_MODELS": json.dumps([profile]),
            "MEMAGENT_EMBEDDINGS__BACKEND": "openai", "MEMAGENT_EMBEDDINGS__API_KEY": secret.embeddings_key,
            "MEMAGENT_EMBEDDINGS__BASE_URL": llm.base_url, "MEMAGENT_TURN__STOP_CHECK_INTERVAL": "0.05",
        }
        yield secret, env, llm


@dataclass
class Seen:
    """What the test run produced: the process's lines and every event of its turns."""

    log: str
    events: list[str]


def run_everything(service: Service, llm: ScriptedLLMServer, alice: str) -> tuple[list[str], list[str]]:
    """Every kind of turn and refusal; (the texts of their events, the keys made on the way)."""
    events: list[str] = []
    auth = {"Authorization": f"Bearer {alice}"}
    with httpx.Client(base_url=service.base_url, timeout=30, headers=auth) as http:
        agent = http.post("/api/agents", json={"name": "Kiosk", "config": {}})
        assert agent.status_code == 201, agent.text
        agent_key = http.post(f"/api/agents/{agent.json()['id']}/keys", json={"name": "kiosk"}).json()["key"]
        llm.enqueue(text("All fine.", usage=(7, 2)))
        events += streamed(http, "hello there")
        llm.enqueue(error(401, message="Incorrect API key provided: " + llm_key_of(llm)))
        events += streamed(http, "this one fails in the model")
        llm.enqueue(tool_calls(call("calculator", {"expression": "1/0"})), text("Cannot divide.", usage=(7, 2)))
        events += streamed(http, "divide one by zero")
        llm.enqueue(text(*[f"w{n} " for n in range(200)], delay=0.05))
        events += stopped(http)
        events += stored(http)
        refusals(service, agent_key)
    return events, [agent_key]


def llm_key_of(llm: ScriptedLLMServer) -> str:
    """The key memagent sent the model server, as a server that quotes it in its error would."""
    return next(r.headers["authorization"] for r in reversed(llm.requests)).removeprefix("Bearer ")


def streamed(http: httpx.Client, query: str) -> list[str]:
    with open_chat(http, query) as stream:
        stream.rest()
        return [json.dumps(f.data) for f in stream.frames if f.data is not None]


def stopped(http: httpx.Client) -> list[str]:
    with open_chat(http, long_query(40, "stopme")) as stream:
        stream.nth_message(2)
        response = http.post(f"/api/tasks/{stream.first_data()['task_id']}/stop")
        assert response.status_code == 200, response.text
        stream.rest()
        return [json.dumps(f.data) for f in stream.frames if f.data is not None]


def stored(http: httpx.Client) -> list[str]:
    """Every stored message and step of the account's conversations."""
    texts: list[str] = []
    statuses: set[str] = set()
    for conversation in http.get("/api/conversations", params={"limit": 100}).json()["data"]:
        messages = http.get(f"/api/conversations/{conversation['id']}/messages", params={"limit": 100})
        texts.append(messages.text)
        for message in messages.json()["data"]:
            statuses.add(message["status"])
            steps = http.get(f"/api/messages/{message['id']}/thoughts")
            assert steps.status_code == 200, steps.text
            texts.append(steps.text)
    assert len(texts) >= 8  # four conversations, their messages and steps
    assert statuses == {"normal", "error", "stop"}
    assert any('"calculator"' in t and "zero" in t.lower() for t in texts)  # the tool's failure is a step
    return texts


def refusals(service: Service, agent_key: str) -> None:
    """Wrong, missing and misused keys; /metrics with each credential; /readyz."""
    with httpx.Client(base_url=service.base_url, timeout=30) as anyone:
        for header in ({}, {"Authorization": "Bearer mk_" + "x" * 43}, {"Authorization": f"Bearer {agent_key}x"}):
            assert anyone.post("/api/chat", json={"query": "hi"}, headers=header).status_code == 401
        assert anyone.get("/metrics", headers={"Authorization": f"Bearer {agent_key}"}).status_code == 403
        assert anyone.get("/metrics", headers={"Authorization": "Bearer not-the-token-at-all"}).status_code == 401
        assert anyone.get("/readyz").status_code == 200


def scrape(service: Service, token: str) -> None:
    response = httpx.get(f"{service.base_url}/metrics", headers={"Authorization": f"Bearer {token}"}, timeout=30)
    assert response.status_code == 200, response.text


@pytest.mark.parametrize("log_format", ["text", "json"])
def test_no_planted_secret_is_in_any_log_line_or_event(
    world: tuple[Planted, dict[str, str], ScriptedLLMServer], log_format: str, tmp_path: Path
) -> None:
    secret, env, llm = world
    alice = create_key(env["MEMAGENT_DATABASE__URL"], f"alice-{log_format}")
    with serving(env | {"MEMAGENT_LOG__FORMAT": log_format}, tmp_path) as service:
        events, made = run_everything(service, llm, alice.raw)
        scrape(service, secret.metrics_token)
        scrape(service, alice.raw)
        time.sleep(1)  # the upkeep's model calls of the last turns, and their lines
    seen = Seen(service.log(), events)
    for value in secret.all(alice.raw, *made):
        assert value not in seen.log, f"{value[:12]}… is in the log"
        for event in seen.events:
            assert value not in event, f"{value[:12]}… is in an event: {event[:200]}"
    if log_format == "json":
        lines = [line for line in seen.log.splitlines() if line.strip()]
        logged = [json.loads(line) for line in lines if line.startswith("{")]
        assert {"time", "level", "logger", "message"} <= set(logged[0])
        # Besides the JSON lines only the CLI's own notices (it prints them before logging is set up).
        assert all(line.startswith(("{", "memagent: ")) for line in lines), lines
        assert any(line.get("task_id") for line in logged)  # a turn's lines carry its ids
