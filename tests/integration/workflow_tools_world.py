"""The world of tests/integration/test_workflow_tools_in_a_turn.py: `memagent serve` (keys required) on
SQLite, or on PostgreSQL with Redis (event log, task control and memory on Redis), whose model is the
OpenAI-protocol test server; and a local web server the workflows' `http_request` nodes call: one
path that answers after 20 s, one that drops the connection the first time it is asked and answers
after, one that always drops it."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import httpx

from tests.e2e.test_keys_and_owners import Key, create_key
from tests.integration.http_answers import ok
from tests.integration.streaming_helpers import open_sse, serving, shared_backends
from tests.llm_server import ScriptedLLMServer
from tests.service import Service

MARK = "You are the workflow tools' test agent."
SLOW_SECONDS = 20


class _Site(BaseHTTPRequestHandler):
    """`/slow`: answers after SLOW_SECONDS. `/flaky/<token>`: the first request is dropped without
    an answer, the next ones get `{"ok": true}`. `/drop/<token>`: every request is dropped."""

    hits: ClassVar[Counter[str]] = Counter()

    def do_GET(self) -> None:
        self.hits[self.path] += 1
        if self.path == "/slow":
            time.sleep(SLOW_SECONDS)
        elif self.path.startswith("/drop/") or (self.path.startswith("/flaky/") and self.hits[self.path] == 1):
            self.close_connection = True  # no status line: the client's request fails
            return
        body = json.dumps({"ok": True}).encode()
        with contextlib.suppress(ConnectionError):  # a stopped run's client is long gone from `/slow`
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@dataclass(frozen=True)
class Site:
    url: str  # ends with "/"

    def hits(self, path: str) -> int:
        return _Site.hits[path]


@contextmanager
def local_site() -> Iterator[Site]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Site)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield Site(f"http://127.0.0.1:{server.server_address[1]}/")
    finally:
        server.shutdown()


@dataclass(frozen=True)
class World:
    backend: str
    service: Service
    llm: ScriptedLLMServer
    alice: Key
    site: Site
    folder: Path


@contextmanager
def world_on(backend: str, folder: Path, llm: ScriptedLLMServer, site: Site) -> Iterator[World]:
    """`backend`: "sqlite" (a file in `folder`) or "postgresql" (a throwaway database, Redis under a
    throwaway key prefix)."""
    settings = {
        "MEMAGENT_AUTH__REQUIRE_KEYS": "true",
        "MEMAGENT_LLM__PROVIDER": "openai", "MEMAGENT_LLM__BASE_URL": llm.base_url,
        "MEMAGENT_LLM__API_KEY": "sk-workflows-0123", "MEMAGENT_LLM__MODEL": "scripted-model",
        "MEMAGENT_LLM__MAX_RETRIES": "0", "MEMAGENT_LLM__CAPABILITIES__TOOL_CALL": "true",
        "MEMAGENT_EMBEDDINGS__BACKEND": "openai", "MEMAGENT_TURN__STOP_CHECK_INTERVAL": "0.05",
        "MEMAGENT_WORKFLOWS__ALLOW_PRIVATE_NETWORKS": "true",  # the local site is on loopback
    }
    if backend == "sqlite":
        with _served({"MEMAGENT_DATABASE__URL": f"sqlite+aiosqlite:///{folder / 'memagent.db'}"} | settings,
                     backend, folder, llm, site) as world:
            yield world
        return
    with shared_backends(settings) as env, _served(env, backend, folder, llm, site) as world:
        yield world


@contextmanager
def _served(env: Mapping[str, str], backend: str, folder: Path, llm: ScriptedLLMServer,
            site: Site) -> Iterator[World]:
    alice = create_key(env["MEMAGENT_DATABASE__URL"], "alice")
    with serving(env, folder) as service:
        yield World(backend, service, llm, alice, site, folder)


# --- workflows, agents and turns ---------------------------------------------------------------


def published_workflow(http: httpx.Client, name: str, graph: Mapping[str, Any]) -> str:
    made = ok(http.post("/api/workflows", json={"name": name, "description": "Greets a city.", "graph": graph}),
              201)
    ok(http.post(f"/api/workflows/{made['id']}/publish", json={"note": "v1"}), 201)
    return str(made["id"])


def agent_with(http: httpx.Client, name: str, workflows: list[dict[str, Any]]) -> str:
    config = {"preset_prompt": MARK, "workflows": workflows, "memory": {"summary": False, "entities": False}}
    agent = str(ok(http.post("/api/agents", json={"name": name, "config": config}), 201)["id"])
    ok(http.post(f"/api/agents/{agent}/publish", json={}), 201)
    return agent


def streamed(http: httpx.Client, agent: str, query: str) -> list[dict[str, Any]]:
    """The logged events of one streamed turn of `agent`."""
    with open_sse(http, "POST", "/api/chat", json={"query": query, "stream": True, "agent_id": agent}) as stream:
        stream.rest()
    return [f.data for f in stream.frames if f.id is not None]


def run_of(events: list[dict[str, Any]]) -> str:
    """The id of the workflow run a turn's events tell of."""
    return str(next(e for e in events if e["event"] == "workflow_started")["workflow"]["workflow_run_id"])
