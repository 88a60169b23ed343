"""What an agent config may refer to, listed over real HTTP (keys required, SQLite): `GET /api/tools`
(the built-in tools and a configured MCP server's, under the names a config takes) and `GET
/api/datasets` (the caller's own datasets, in pages). Both are the account's: an agent key is 403.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from tests.e2e.test_keys_and_owners import Key, create_key
from tests.integration.http_answers import ok, refused
from tests.integration.streaming_helpers import serving
from tests.mcp_servers import http_mcp_server
from tests.service import Service

pytestmark = pytest.mark.integration


@dataclass(frozen=True)
class World:
    service: Service
    alice: Key
    bob: Key


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    """The SDK-written MCP fixture over HTTP as `remote`, and a server whose command does not exist."""
    folder = tmp_path_factory.mktemp("tools-and-datasets")
    db_url = f"sqlite+aiosqlite:///{folder / 'memagent.db'}"
    alice, bob = create_key(db_url, "alice"), create_key(db_url, "bob")
    with http_mcp_server() as url:
        servers = [{"name": "remote", "transport": "http", "url": url},
                   {"name": "broken", "transport": "stdio", "command": "/nonexistent/mcp-server"}]
        env = {"MEMAGENT_DATABASE__URL": db_url, "MEMAGENT_AUTH__REQUIRE_KEYS": "true",
               "MEMAGENT_MCP__SERVERS": json.dumps(servers)}
        with serving(env, folder) as service:
            yield World(service, alice, bob)


@pytest.fixture
def http(world: World) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=world.service.base_url, timeout=30) as client:
        yield client


def tools_by_name(http: httpx.Client, key: Key) -> dict[str, dict[str, Any]]:
    return {tool["name"]: tool for tool in ok(http.get("/api/tools", headers=key.headers))["data"]}


def test_the_built_in_tools_are_listed_with_their_descriptions_and_parameters(http: httpx.Client, world: World) -> None:
    tools = tools_by_name(http, world.alice)
    calculator = tools["calculator"]
    assert (calculator["server"], calculator["qualified_name"]) == (None, "calculator")
    assert calculator["description"].startswith("Evaluate an arithmetic expression")
    assert calculator["parameters"]["type"] == "object"
    assert calculator["parameters"]["required"] == ["expression"]
    assert tools["current_time"]["server"] is None  # the built-in keeps its name over the MCP namesake


def test_an_mcp_servers_tools_are_listed_under_the_names_an_agent_config_takes(
    http: httpx.Client, world: World
) -> None:
    tools = tools_by_name(http, world.alice)
    assert {k: tools["echo"][k] for k in ("qualified_name", "server", "description")} == {
        "qualified_name": "remote.echo", "server": "remote", "description": "Repeat the text."}
    assert tools["echo"]["parameters"]["properties"]["text"]["type"] == "string"
    # Its `current_time` clashes with the built-in: offered qualified.
    assert tools["remote.current_time"]["qualified_name"] == "remote.current_time"
    assert {name for name, tool in tools.items() if tool["server"] == "remote"} >= {"echo", "add", "pid"}
    servers = {s["name"]: s for s in ok(http.get("/api/tools", headers=world.alice.headers))["servers"]}
    assert servers["remote"] == {"name": "remote", "transport": "http", "state": "ready", "error": "",
                                 "every_tool": "remote.*"}
    assert (servers["broken"]["state"], servers["broken"]["every_tool"]) == ("failed", "broken.*")
    assert "command not found" in servers["broken"]["error"]
    assert not [tool for tool in tools.values() if tool["server"] == "broken"]


def test_every_listed_name_is_one_an_agent_can_be_published_with(http: httpx.Client, world: World) -> None:
    listed = ok(http.get("/api/tools", headers=world.alice.headers))
    names = [tool["name"] for tool in listed["data"]] + [tool["qualified_name"] for tool in listed["data"]]
    names += [s["every_tool"] for s in listed["servers"] if s["state"] == "ready"]
    made = ok(http.post("/api/agents", json={"name": "Toolbelt", "config": {"tools": names}},
                        headers=world.alice.headers), 201)
    ok(http.post(f"/api/agents/{made['id']}/publish", headers=world.alice.headers), 201)


def test_the_datasets_listed_are_the_callers_own_newest_first_in_pages(http: httpx.Client, world: World) -> None:
    made = [ok(http.post("/api/datasets", json={"name": name}, headers=world.alice.headers), 201)
            for name in ("Handbook", "Timetables", "Menus")]
    theirs = ok(http.post("/api/datasets", json={"name": "Bob's notes"}, headers=world.bob.headers), 201)
    document = {"name": "menu.md", "text": "Soup on Monday. Fish on Friday."}
    ok(http.post(f"/api/datasets/{made[2]['id']}/documents", json=document, headers=world.alice.headers), 201)

    page = ok(http.get("/api/datasets", headers=world.alice.headers))
    assert (page["offset"], page["limit"], page["has_more"]) == (0, 20, False)
    assert [d["name"] for d in page["data"]] == ["Menus", "Timetables", "Handbook"]
    menus = page["data"][0]
    assert set(menus) == {"id", "name", "created_at", "documents", "chunks"}
    assert (menus["id"], menus["documents"]) == (made[2]["id"], 1)
    assert menus["chunks"] >= 1
    assert theirs["id"] not in json.dumps(page)

    first = ok(http.get("/api/datasets?limit=2", headers=world.alice.headers))
    second = ok(http.get("/api/datasets?limit=2&offset=2", headers=world.alice.headers))
    assert (first["has_more"], second["has_more"]) == (True, False)
    assert ok(http.get("/api/datasets?limit=3", headers=world.alice.headers))["has_more"] is False  # exactly full
    assert [d["id"] for d in first["data"] + second["data"]] == [d["id"] for d in page["data"]]
    assert [d["id"] for d in ok(http.get("/api/datasets", headers=world.bob.headers))["data"]] == [theirs["id"]]


def test_an_agent_key_is_refused_and_no_key_is_asked_for(http: httpx.Client, world: World) -> None:
    agent = ok(http.post("/api/agents", json={"name": "Kiosk"}, headers=world.alice.headers), 201)["id"]
    key = ok(http.post(f"/api/agents/{agent}/keys", json={"name": "kiosk"}, headers=world.alice.headers), 201)["key"]
    for path in ("/api/tools", "/api/datasets"):
        assert "bound to agent" in refused(http.get(path, headers={"Authorization": f"Bearer {key}"}), 403,
                                           "forbidden")
        refused(http.get(path), 401, "unauthorized")


def test_a_document_added_in_its_request_is_ready_at_once_and_read_back_only_by_its_owner(
    http: httpx.Client, world: World
) -> None:
    dataset = ok(http.post("/api/datasets", json={"name": "Rules"}, headers=world.alice.headers), 201)
    document = {"name": "rules.md", "text": "No running in the halls. Lights out at ten."}
    added = ok(http.post(f"/api/datasets/{dataset['id']}/documents", json=document, headers=world.alice.headers), 201)
    assert (added["status"], added["error"], added["media_type"]) == ("ready", "", "text/markdown")
    assert added["chunks"] >= 1
    path = f"/api/datasets/{dataset['id']}/documents/{added['id']}"
    assert ok(http.get(path, headers=world.alice.headers)) == added
    refused(http.get(path, headers=world.bob.headers), 404, "not_found")
    refused(http.get(f"/api/datasets/{dataset['id']}/documents/missing", headers=world.alice.headers), 404,
            "not_found")
