"""Agent keys over real HTTP (keys required, SQLite): an owner creates, lists and revokes a key bound
to one agent; the agent's parameters; and what an agent key may not do, on every route of the app
and on the MCP endpoint.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from fastapi.routing import APIRoute

from interfaces.app import create_app
from interfaces.settings.settings import Settings
from tests.e2e.test_keys_and_owners import Key, create_key
from tests.integration.http_answers import ok, refused
from tests.integration.streaming_helpers import serving
from tests.service import Service

pytestmark = pytest.mark.integration

# What an agent key may reach, as (method, path with its parameters written `{}`). Everything else
# of the app must answer it 403 `forbidden`. The chat turn and its end user's conversations (the
# lead's), the agent's parameters (here), the OpenAI-compatible API (its own agent as the one model,
# tests/integration/test_openai_api.py), and the routes outside /api/ that need no key at all.
# A route added later shows up in the walk below: it belongs here only if an agent key is for it.
# What the builder picks from (GET /api/tools, GET /api/datasets) is the account's configuration: not here.
AGENT_KEY_ROUTES = frozenset({
    ("POST", "/api/chat"),
    ("GET", "/api/conversations"),
    ("GET", "/api/conversations/{}"),
    ("PATCH", "/api/conversations/{}"),
    ("DELETE", "/api/conversations/{}"),
    ("GET", "/api/conversations/{}/messages"),
    ("GET", "/api/conversations/{}/usage"),  # its agent's end users' conversations, like their messages
    ("GET", "/api/messages/{}/thoughts"),
    ("POST", "/api/messages/{}/feedback"),
    ("POST", "/api/messages/{}/regenerate"),
    ("GET", "/api/messages/{}/suggested"),
    ("GET", "/api/tasks/{}/events"),
    ("POST", "/api/tasks/{}/stop"),
    ("GET", "/api/agents/{}/parameters"),
    ("GET", "/api/users/{}/memory"),
    ("DELETE", "/api/users/{}/memory"),
    ("PUT", "/api/users/{}/memory/facts/{}"),
    ("DELETE", "/api/users/{}/memory/facts/{}"),
    ("GET", "/api/users/{}/memory/search"),
    ("GET", "/v1/models"),
    ("GET", "/v1/models/{}"),
    ("POST", "/v1/chat/completions"),
    ("POST", "/v1/chat/completions/{}/cancel"),
    ("POST", "/v1/responses"),
    ("GET", "/v1/responses/{}"),
    ("POST", "/v1/responses/{}/cancel"),
    ("GET", "/healthz"),
    ("GET", "/readyz"),
    ("GET", "/"),  # the chat page and its static files (interfaces/http/web.py): public
    ("GET", "/web/{}"),
    ("GET", "/builder"),  # the builder page: public like the chat page; its API calls need an account key
    ("GET", "/.well-known/oauth-protected-resource/mcp"),  # RFC 9728 metadata: public, says how to get a key
})


@dataclass(frozen=True)
class World:
    service: Service
    alice: Key
    bob: Key
    ada: str  # Alice's agent, published, on a model that takes images
    ben: str  # Alice's second agent, published, on the offline model
    draft_only: str  # Alice's agent never published
    bobs: str  # Bob's agent, published


def bearer(raw: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {raw}"}


def agent_of(http: httpx.Client, key: Key, name: str, config: dict[str, Any], *, publish: bool = True) -> str:
    agent = ok(http.post("/api/agents", json={"name": name, "config": config}, headers=key.headers), 201)["id"]
    if publish:
        ok(http.post(f"/api/agents/{agent}/publish", headers=key.headers), 201)
    return str(agent)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    folder = tmp_path_factory.mktemp("agent-keys")
    db_url = f"sqlite+aiosqlite:///{folder / 'memagent.db'}"
    alice, bob = create_key(db_url, "alice"), create_key(db_url, "bob")
    # A profile whose model takes images; it is never called (no turn runs on it here).
    vision = {"name": "vision", "provider": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "gpt-4o",
              "api_key_env": "VISION_KEY", "max_retries": 0}
    env = {"MEMAGENT_DATABASE__URL": db_url, "MEMAGENT_AUTH__REQUIRE_KEYS": "true",
           "MEMAGENT_MODELS": json.dumps([vision]), "VISION_KEY": "key-of-the-vision-model"}
    with serving(env, folder) as service, httpx.Client(base_url=service.base_url, timeout=30) as http:
        ada = agent_of(http, alice, "Ada", {"model": "vision", "opening_statement": "Hello, I am Ada.",
                                            "suggested_questions": ["What can you do?", "Who made you?"]})
        ben = agent_of(http, alice, "Ben", {})
        draft_only = agent_of(http, alice, "Draft", {}, publish=False)
        bobs = agent_of(http, bob, "Bob's", {})
        yield World(service, alice, bob, ada, ben, draft_only, bobs)


@pytest.fixture
def http(world: World) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=world.service.base_url, timeout=30) as client:
        yield client


def agent_key(http: httpx.Client, owner: Key, agent: str, name: str = "web page") -> dict[str, Any]:
    return ok(http.post(f"/api/agents/{agent}/keys", json={"name": name}, headers=owner.headers), 201)


def test_an_owner_creates_an_agent_key_shown_once_lists_it_without_the_key_and_revokes_it(
    http: httpx.Client, world: World
) -> None:
    created = agent_key(http, world.alice, world.ben, "Ben's kiosk")
    raw = created.pop("key")
    assert raw.startswith("mk_")
    assert set(created) == {"id", "name", "agent_id", "created_at", "revoked_at"}
    assert (created["name"], created["agent_id"], created["revoked_at"]) == ("Ben's kiosk", world.ben, None)
    assert ok(http.get(f"/api/agents/{world.ben}/parameters", headers=bearer(raw)))["name"] == "Ben"

    listing = http.get(f"/api/agents/{world.ben}/keys", headers=world.alice.headers)
    assert created in ok(listing)["data"]
    assert raw not in listing.text
    assert raw.removeprefix("mk_")[:12] not in listing.text
    # The agent's list holds only its keys: not the account's own, nor another agent's.
    other = agent_key(http, world.alice, world.ada)
    assert {k["agent_id"] for k in ok(http.get(f"/api/agents/{world.ben}/keys", headers=world.alice.headers))["data"]} \
        == {world.ben}
    assert other["id"] not in listing.text

    revoked = ok(http.delete(f"/api/agents/{world.ben}/keys/{created['id']}", headers=world.alice.headers))
    assert revoked["revoked_at"] is not None
    refused(http.get(f"/api/agents/{world.ben}/parameters", headers=bearer(raw)), 401, "unauthorized")
    again = ok(http.delete(f"/api/agents/{world.ben}/keys/{created['id']}", headers=world.alice.headers))
    assert again["revoked_at"] == revoked["revoked_at"]
    ok(http.get(f"/api/agents/{world.ada}/parameters", headers=bearer(other["key"])))  # the other key goes on


def test_another_owners_or_an_unknown_agent_and_another_agents_keys_are_404(http: httpx.Client, world: World) -> None:
    bens = agent_key(http, world.alice, world.ben)
    for agent in (world.bobs, "no-such-agent"):
        refused(http.post(f"/api/agents/{agent}/keys", json={"name": "x"}, headers=world.alice.headers),
                404, "not_found")
        refused(http.get(f"/api/agents/{agent}/keys", headers=world.alice.headers), 404, "not_found")
    for agent, key_id, owner in ((world.ben, bens["id"], world.bob),  # Bob on Alice's agent
                                 (world.ada, bens["id"], world.alice),  # Ben's key, through Ada
                                 (world.ben, world.alice.id, world.alice),  # Alice's account key
                                 (world.ben, "no-such-key", world.alice)):
        refused(http.delete(f"/api/agents/{agent}/keys/{key_id}", headers=owner.headers), 404, "not_found")
    assert ok(http.get(f"/api/agents/{world.ben}/parameters", headers=bearer(bens["key"])))["name"] == "Ben"
    refused(http.get("/api/agents", headers=world.alice.headers | {"Authorization": "Bearer x"}), 401, "unauthorized")
    ok(http.get("/api/agents", headers=world.alice.headers))  # the account key works as it always did


def test_the_default_agent_gets_no_agent_key_and_a_bad_name_is_refused(http: httpx.Client, world: World) -> None:
    message = refused(http.post("/api/agents/default/keys", json={"name": "x"}, headers=world.alice.headers),
                      409, "conflict")
    assert "create an agent of your own" in message
    before = ok(http.get(f"/api/agents/{world.ada}/keys", headers=world.alice.headers))["data"]
    for body in ({"name": ""}, {"name": "x" * 101}, {"name": "a\nb"}, {}, {"name": "x", "y": 1}, {"name": 7}):
        refused(http.post(f"/api/agents/{world.ada}/keys", json=body, headers=world.alice.headers),
                422, "invalid_request")
    # Only white space passes the body's types; the key's own rule refuses it.
    refused(http.post(f"/api/agents/{world.ada}/keys", json={"name": "   "}, headers=world.alice.headers),
            422, "invalid_input")
    assert ok(http.get(f"/api/agents/{world.ada}/keys", headers=world.alice.headers))["data"] == before


def test_parameters_are_those_of_the_published_config_for_the_owner_and_the_agents_own_key(
    http: httpx.Client, world: World
) -> None:
    expected = {
        "agent_id": world.ada, "name": "Ada", "version": 1, "opening_statement": "Hello, I am Ada.",
        "suggested_questions": ["What can you do?", "Who made you?"], "accepts_images": True,
        "suggested_questions_after_answer": False,
    }
    adas = agent_key(http, world.alice, world.ada)["key"]
    assert ok(http.get(f"/api/agents/{world.ada}/parameters", headers=world.alice.headers)) == expected
    assert ok(http.get(f"/api/agents/{world.ada}/parameters", headers=bearer(adas))) == expected
    assert ok(http.get(f"/api/agents/{world.ada}/parameters?user=u-1", headers=bearer(adas))) == expected
    assert ok(http.get(f"/api/agents/{world.ben}/parameters", headers=world.alice.headers))["accepts_images"] is False

    message = refused(http.get(f"/api/agents/{world.ben}/parameters", headers=bearer(adas)), 403, "forbidden")
    assert world.ada in message
    refused(http.get(f"/api/agents/{world.bobs}/parameters", headers=world.alice.headers), 404, "not_found")
    refused(http.get("/api/agents/no-such-agent/parameters", headers=world.alice.headers), 404, "not_found")
    refused(http.get(f"/api/agents/{world.draft_only}/parameters", headers=world.alice.headers), 409, "not_published")
    drafts = agent_key(http, world.alice, world.draft_only)["key"]
    refused(http.get(f"/api/agents/{world.draft_only}/parameters", headers=bearer(drafts)), 409, "not_published")


def api_routes(routes: Iterable[Any]) -> Iterator[APIRoute]:
    """The routes, those of included routers too (FastAPI keeps an included router as one entry)."""
    for route in routes:
        if isinstance(route, APIRoute):
            yield route
        included = getattr(route, "original_router", None)
        if included is not None:
            yield from api_routes(included.routes)


def app_routes() -> list[tuple[str, str]]:
    """Every (method, path) the app serves, from the app itself, routes hidden from the spec included."""
    app = create_app(Settings())
    return sorted({(method, route.path) for route in api_routes(app.routes)
                   for method in route.methods - {"HEAD", "OPTIONS"}})


def pattern(path: str) -> str:
    return re.sub(r"\{[^}]+\}", "{}", path)


def is_forbidden_for_an_agent_key(response: httpx.Response) -> bool:
    """403 `forbidden`, saying why: the key is bound to an agent (`Caller.account`'s message)."""
    if response.status_code != 403 or not response.headers.get("content-type", "").startswith("application/json"):
        return False
    body = response.json()
    return body.get("code") == "forbidden" and "bound to agent" in str(body.get("message"))


def test_an_agent_key_is_forbidden_on_every_route_outside_its_allow_list(http: httpx.Client, world: World) -> None:
    raw = agent_key(http, world.alice, world.ada)["key"]
    routes = app_routes()
    spec = ok(http.get("/openapi.json"))["paths"]
    served = {(method.upper(), path) for path, operations in spec.items() for method in operations}
    assert served <= set(routes)  # the walk sees every route the running service documents
    assert ("POST", "/api/agents/{agent_id}/keys") in routes
    walked = [(m, p) for m, p in routes if (m, pattern(p)) not in AGENT_KEY_ROUTES]
    assert len(walked) > 20
    wrong: list[str] = []
    for method, path in walked:
        # Its own agent, in every agent's path: even there, only the parameters are an agent key's.
        url = path.replace("{agent_id}", world.ada)
        url = re.sub(r"\{(version|a|b)\}", "1", url)
        url = re.sub(r"\{[^}]+\}", "x1", url)
        for user in ("", "?user=u-1"):
            response = http.request(method, url + user, headers=bearer(raw),
                                    json={} if method in ("POST", "PUT", "PATCH") else None)
            if not is_forbidden_for_an_agent_key(response):
                wrong.append(f"{method} {url + user}: {response.status_code} {response.text[:200]}")
    assert wrong == []
    ok(http.get(f"/api/agents/{world.ada}/parameters", headers=bearer(raw)))  # and the key does work


def test_the_mcp_endpoint_refuses_an_agent_key_with_403(http: httpx.Client, world: World) -> None:
    raw = agent_key(http, world.alice, world.ada)["key"]
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
    accept = "application/json, text/event-stream"
    response = http.post("/mcp/", json=initialize, headers=bearer(raw) | {"Accept": accept})
    assert is_forbidden_for_an_agent_key(response), response.text
    assert "the MCP server" in response.json()["message"]
    accepted = http.post("/mcp/", json=initialize, headers=world.alice.headers | {"Accept": accept})
    assert accepted.status_code not in (401, 403), accepted.text
