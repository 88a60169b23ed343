"""Real backends for tests that run `memagent` as a process: throwaway PostgreSQL databases,
private redis-servers, throwaway key prefixes on the shared Redis, and the CLI itself.

PostgreSQL is the server of `db_fixtures.POSTGRES_SERVER`, Redis the one of
`redis_fixtures.REDIS_URL`; when either does not answer, the tests that need it are skipped
with the reason, as the contract suites do. Everything made here is removed again: databases
are dropped, key prefixes deleted, private redis-servers stopped.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import shutil
import subprocess
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest
import redis

from tests.integration.db_fixtures import POSTGRES_SERVER
from tests.integration.redis_fixtures import REDIS_URL
from tests.service import Service, free_port, parse_sse, run_memagent, running_service, service_env

PG_ERRORS = (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, TimeoutError)


# --- the CLI -----------------------------------------------------------------------------------


def memagent(
    args: list[str], env: Mapping[str, str], timeout: float = 90
) -> subprocess.CompletedProcess[str]:
    """Run `python -m interfaces.cli.main ARGS` to completion with only `env`'s MEMAGENT_* settings."""
    return run_memagent(args, service_env(env), timeout)


def migrate(database_url: str) -> subprocess.CompletedProcess[str]:
    """`memagent migrate`; fails the test with its output when it does not succeed."""
    done = memagent(["migrate"], {"MEMAGENT_DATABASE__URL": database_url})
    assert done.returncode == 0, f"memagent migrate failed:\n{done.stdout}\n{done.stderr}"
    return done


# --- PostgreSQL --------------------------------------------------------------------------------


def pg_dsn(database: str | None = None) -> str:
    url = POSTGRES_SERVER.set(drivername="postgresql")
    if database is not None:
        url = url.set(database=database)
    return url.render_as_string(hide_password=False)


def pg_url(database: str) -> str:
    """The service's URL for one database of the test server."""
    return POSTGRES_SERVER.set(database=database).render_as_string(hide_password=False)


def pg_query(database: str, sql: str, *args: object) -> list[asyncpg.Record]:
    async def run() -> list[asyncpg.Record]:
        connection = await asyncpg.connect(pg_dsn(database), timeout=5)
        try:
            return list(await connection.fetch(sql, *args))
        finally:
            await connection.close()

    return asyncio.run(run())


def _pg_admin(statement: str) -> None:
    """One statement on the server's maintenance database (CREATE/DROP DATABASE)."""

    async def run() -> None:
        connection = await asyncpg.connect(pg_dsn(), timeout=5)
        try:
            await connection.execute(statement)
        finally:
            await connection.close()

    asyncio.run(run())


@contextmanager
def throwaway_pg_database() -> Iterator[str]:
    """A new, empty database `memagent_test_<hex>` (not migrated); yields its name, drops it after."""
    name = f"memagent_test_{secrets.token_hex(6)}"
    try:
        _pg_admin(f'CREATE DATABASE "{name}"')
    except PG_ERRORS as exc:
        pytest.skip(f"PostgreSQL not reachable at {POSTGRES_SERVER.render_as_string()}: {exc}")
    try:
        yield name
    finally:
        _pg_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


# --- Redis -------------------------------------------------------------------------------------


def shared_redis_url() -> str:
    """The shared test Redis, or skip."""
    client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2, socket_timeout=2)
    try:
        client.ping()
    except (redis.RedisError, OSError) as exc:
        pytest.skip(f"no Redis at {REDIS_URL}: {exc}")
    finally:
        client.close()
    return REDIS_URL


def new_prefix() -> str:
    return f"memagent-test-{secrets.token_hex(6)}:"


def prefix_keys(url: str, prefix: str) -> set[str]:
    client = redis.Redis.from_url(url, decode_responses=True)
    try:
        return set(client.scan_iter(match=f"{prefix}*", count=500))
    finally:
        client.close()


def delete_prefix(url: str, prefix: str) -> None:
    client = redis.Redis.from_url(url, decode_responses=True)
    try:
        keys = list(client.scan_iter(match=f"{prefix}*", count=500))
        if keys:
            client.delete(*keys)
    finally:
        client.close()


@dataclass
class RedisServer:
    """A private `redis-server` on a port of its own, without persistence; stop and start it at will."""

    workdir: Path
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def client(self) -> redis.Redis:
        return redis.Redis(host="127.0.0.1", port=self.port, decode_responses=True, socket_timeout=5)

    def start(self) -> None:
        assert self.process is None, "already running"
        log_path = self.workdir / f"redis-{self.port}.log"
        with log_path.open("ab") as log:
            self.process = subprocess.Popen(
                ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                 "--appendonly", "no", "--dir", str(self.workdir)],
                stdout=log, stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"redis-server exited: {log_path.read_text()}")
            client = self.client()
            try:
                if client.ping():
                    return
            except (redis.RedisError, OSError):
                time.sleep(0.05)
            finally:
                client.close()
        raise RuntimeError(f"redis-server on port {self.port} did not answer")

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None


@contextmanager
def private_redis(workdir: Path) -> Iterator[RedisServer]:
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    server = RedisServer(workdir)
    server.start()
    try:
        yield server
    finally:
        server.stop()


# --- HTTP scenario helpers ---------------------------------------------------------------------


@contextmanager
def serving(
    env: Mapping[str, str], log_dir: Path, timeout: float = 30
) -> Iterator[tuple[Service, httpx.Client]]:
    """`memagent serve` with `env`, and an HTTP client for it."""
    with running_service(env, log_dir) as service, httpx.Client(base_url=service.base_url) as client:
        client.timeout = httpx.Timeout(timeout)
        yield service, client


def chat(client: httpx.Client, query: str, conversation_id: str | None = None) -> dict[str, Any]:
    """One non-streamed turn that must succeed."""
    body: dict[str, Any] = {"query": query}
    if conversation_id:
        body["conversation_id"] = conversation_id
    response = client.post("/api/chat", json=body)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    assert result["status"] == "normal", result
    return result


def stream_chat(client: httpx.Client, query: str, conversation_id: str | None = None) -> list[dict[str, Any]]:
    """One streamed turn; its SSE frames."""
    body: dict[str, Any] = {"query": query, "stream": True}
    if conversation_id:
        body["conversation_id"] = conversation_id
    response = client.post("/api/chat", json=body)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/event-stream")
    return parse_sse(response.text)  # type: ignore[return-value]


def prompt_of(client: httpx.Client, message_id: str) -> list[dict[str, Any]]:
    """The prompt snapshot the turn's last step sent: messages as dicts with `role` and `content`."""
    response = client.get(f"/api/messages/{message_id}/thoughts")
    assert response.status_code == 200, response.text
    steps = response.json()["data"]
    assert steps, "the turn recorded no steps"
    prompt: list[dict[str, Any]] = json.loads(steps[-1]["message"])
    return prompt


def texts(message: dict[str, Any]) -> str:
    return "\n".join(block["text"] for block in message["content"] if block["type"] == "text")


def history_texts(prompt: list[dict[str, Any]]) -> list[str]:
    """The texts between the system prompt and the current user message."""
    assert prompt[0]["role"] == "system"
    assert prompt[-1]["role"] == "user"
    return [texts(m) for m in prompt[1:-1]]


def messages_of(client: httpx.Client, conversation_id: str) -> list[tuple[str, str]]:
    """(query, status) of every message of a conversation, oldest first."""
    response = client.get(f"/api/conversations/{conversation_id}/messages", params={"limit": 100})
    assert response.status_code == 200, response.text
    return [(m["query"], m["status"]) for m in response.json()["data"]]
