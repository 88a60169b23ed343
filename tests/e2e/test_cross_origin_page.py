"""A page on another origin calls memagent from Chromium with `fetch`, as a front end's dev server
(`localhost:5173`) or `app.example.com` calling `api.example.com` does.

memagent runs with keys required and `MEMAGENT_SERVER__CORS_ORIGINS` listing the page's origin. The
page is served by a plain HTTP server on another port; `127.0.0.1` and `localhost` on that port are
two origins, one listed and one not, so the same page shows both sides of the rule.
"""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from tests.e2e.test_keys_and_owners import Key, create_key
from tests.service import Service, free_port, running_service

PAGE = b"<!doctype html><title>another origin</title><p>a front end</p>"

# Streams a POST with the key and returns what a page can see of the answer: status, the headers
# memagent exposes, and the whole streamed body read chunk by chunk.
FETCH_STREAM = """async ([url, key, body]) => {
  const response = await fetch(url, {method: 'POST', body: JSON.stringify(body),
    headers: {'Authorization': 'Bearer ' + key, 'Content-Type': 'application/json'}});
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = '', chunks = 0;
  for (;;) {
    const {done, value} = await reader.read();
    if (done) break;
    chunks += 1;
    text += decoder.decode(value, {stream: true});
  }
  return {status: response.status, chunks, text,
          conversation: response.headers.get('X-Memagent-Conversation-Id')};
}"""

FETCH_REFUSED = """async ([url, key]) => {
  try {
    await fetch(url, {headers: {'Authorization': 'Bearer ' + key}});
    return 'answered';
  } catch (error) {
    return error.name;
  }
}"""


@dataclass(frozen=True)
class World:
    service: Service
    key: Key
    page_port: int

    @property
    def listed_origin(self) -> str:
        return f"http://127.0.0.1:{self.page_port}"

    @property
    def unlisted_origin(self) -> str:
        return f"http://localhost:{self.page_port}"


class _PageHandler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - the standard library's name
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, *_: Any) -> None:
        pass


@pytest.fixture(scope="module")
def page_port() -> Iterator[int]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), _PageHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def world(page_port: int, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    folder = tmp_path_factory.mktemp("cors")
    db_url = f"sqlite+aiosqlite:///{folder / 'memagent.db'}"
    key = create_key(db_url, "front-end")
    env = {"MEMAGENT_DATABASE__URL": db_url, "MEMAGENT_AUTH__REQUIRE_KEYS": "true",
           "MEMAGENT_SERVER__CORS_ORIGINS": json.dumps([f"http://127.0.0.1:{page_port}"])}
    with running_service(env, folder) as service:
        yield World(service, key, page_port)


@pytest.fixture
def tab(browser: Any) -> Iterator[Any]:
    context = browser.new_context()
    try:
        yield context.new_page()
    finally:
        context.close()


def test_a_listed_origin_streams_a_turn_from_api_chat(world: World, tab: Any) -> None:
    tab.goto(world.listed_origin + "/")
    body = {"query": "Hello from another origin.", "stream": True}
    answer = tab.evaluate(FETCH_STREAM, [world.service.base_url + "/api/chat", world.key.raw, body])
    assert answer["status"] == 200
    assert "event: agent_end" in answer["text"]
    assert "Hello from another origin." in answer["text"]


def test_a_listed_origin_streams_a_completion_and_reads_the_conversation_header(world: World, tab: Any) -> None:
    tab.goto(world.listed_origin + "/")
    body = {"model": "memagent", "stream": True, "messages": [{"role": "user", "content": "Hi across origins."}]}
    answer = tab.evaluate(FETCH_STREAM, [world.service.base_url + "/v1/chat/completions", world.key.raw, body])
    assert answer["status"] == 200
    assert answer["text"].rstrip().endswith("data: [DONE]")
    assert answer["conversation"]  # exposed to the page, so it can go on in the same conversation


def test_an_unlisted_origin_is_refused_by_its_browser(world: World, tab: Any) -> None:
    tab.goto(world.unlisted_origin + "/")
    assert tab.evaluate(FETCH_REFUSED, [world.service.base_url + "/v1/models", world.key.raw]) == "TypeError"


def test_a_preflight_names_what_a_page_may_send_only_to_a_listed_origin(world: World) -> None:
    asked = {"Access-Control-Request-Method": "POST",
             "Access-Control-Request-Headers": "authorization, content-type, last-event-id"}
    listed = httpx.options(world.service.base_url + "/api/chat", headers={"Origin": world.listed_origin, **asked})
    unlisted = httpx.options(world.service.base_url + "/api/chat", headers={"Origin": world.unlisted_origin, **asked})
    assert listed.status_code == 200
    assert listed.headers["access-control-allow-origin"] == world.listed_origin
    assert {"authorization", "content-type", "last-event-id"} <= {
        h.strip().lower() for h in listed.headers["access-control-allow-headers"].split(",")
    }
    assert "access-control-allow-origin" not in unlisted.headers


def test_a_refusal_is_readable_by_the_listed_page_and_names_its_code(world: World) -> None:
    refused = httpx.get(world.service.base_url + "/v1/models", headers={"Origin": world.listed_origin})
    assert refused.status_code == 401
    assert refused.headers["access-control-allow-origin"] == world.listed_origin
    assert "x-memagent-conversation-id" in refused.headers["access-control-expose-headers"].lower()
