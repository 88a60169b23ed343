"""An account's published workflows as tools of memagent's MCP server, over Streamable HTTP with the
official SDK client (keys required, two accounts): listed for their account only, at their latest
version, not when archived or unpublished, and never under a built-in tool's name; a call runs the
latest version and its run is recorded; bad inputs, a failed run and an unknown tool are tool errors;
another account cannot call them; a call its client gives up on leaves its run `stopped`."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.e2e.test_keys_and_owners import Key
from tests.integration.http_answers import ok
from tests.integration.streaming_helpers import wait_until
from tests.integration.test_mcp_server import data, session_for, text_of
from tests.integration.two_accounts import two_accounts
from tests.integration.workflow_tools_world import Site, local_site
from tests.service import Service
from tests.workflow_graphs import SIMPLE, simple

pytestmark = pytest.mark.integration

BUILT_IN = {"chat", "get_memory", "search_memory"}


@dataclass(frozen=True)
class World:
    service: Service
    alice: Key
    bob: Key
    site: Site
    database: Path


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    folder = tmp_path_factory.mktemp("mcp-workflows")
    private = {"MEMAGENT_WORKFLOWS__ALLOW_PRIVATE_NETWORKS": "true"}  # the slow site is on loopback
    with local_site() as site, two_accounts("sqlite", folder, private) as served:
        yield World(served.service, served.alice, served.bob, site, folder / "memagent.db")


def api(world: World, key: Key) -> httpx.Client:
    return httpx.Client(base_url=world.service.base_url, timeout=30, headers=key.headers)


def published(http: httpx.Client, name: str, graph: dict[str, Any] = SIMPLE, description: str = "") -> str:
    made = ok(http.post("/api/workflows", json={"name": name, "description": description, "graph": graph}), 201)
    ok(http.post(f"/api/workflows/{made['id']}/publish", json={"note": "v1"}), 201)
    return str(made["id"])


@asynccontextmanager
async def mcp_session(world: World, key: Key) -> AsyncIterator[ClientSession]:
    http, url = session_for(world.service, key)  # reads only the key's `raw`
    async with http, streamable_http_client(url, http_client=http) as streams, ClientSession(*streams) as session:
        await session.initialize()
        yield session


async def test_the_list_has_the_accounts_published_workflows_at_their_latest_version_only(world: World) -> None:
    with api(world, world.alice) as alice, api(world, world.bob) as bob:
        greet = published(alice, "greet_city", description="Greets a city.")
        two_inputs = simple(nodes=[
            {"id": "start", "type": "start", "inputs": [
                {"name": "city", "type": "string", "description": "Where"},
                {"name": "times", "type": "integer", "default": 1}]},
            *SIMPLE["nodes"][1:],
        ])
        ok(alice.put(f"/api/workflows/{greet}/draft", json={"revision": 1, "graph": two_inputs}))
        ok(alice.post(f"/api/workflows/{greet}/publish", json={"note": "v2"}), 201)
        ok(alice.post("/api/workflows", json={"name": "never_published", "graph": SIMPLE}), 201)
        ok(alice.delete(f"/api/workflows/{published(alice, 'archived_one')}"))
        published(alice, "chat", description="A workflow named like the built-in tool.")
        published(bob, "bobs_flow")
        latest_schema = ok(alice.get(f"/api/workflows/{greet}/versions/2"))["tool_schema"]

    async with mcp_session(world, world.alice) as session:
        listed = (await session.list_tools()).tools
        tools = {t.name: t for t in listed}
        assert len(listed) == len(tools)  # one tool per name
        assert set(tools) >= BUILT_IN | {"greet_city"}
        assert not set(tools) & {"never_published", "archived_one", "bobs_flow"}
        assert (tools["greet_city"].description, tools["greet_city"].input_schema) == ("Greets a city.", latest_schema)
        assert set(tools["greet_city"].input_schema["properties"]) == {"city", "times"}
        # The built-in `chat` keeps its name: the workflow called so is not offered, and `chat` chats.
        assert tools["chat"].description != "A workflow named like the built-in tool."
        assert data(await session.call_tool("chat", {"query": "Hello"}))["status"] == "normal"
    async with mcp_session(world, world.bob) as session:
        assert {t.name for t in (await session.list_tools()).tools} == BUILT_IN | {"bobs_flow"}


async def test_a_call_runs_the_latest_version_for_the_account_and_its_run_is_recorded(world: World) -> None:
    with api(world, world.alice) as alice:
        workflow = published(alice, "greet_recorded")
        async with mcp_session(world, world.alice) as session:
            result = await session.call_tool("greet_recorded", {"city": "Paris"})
        assert data(result) == {"text": "Hello Paris"}
        assert '"text": "Hello Paris"' in text_of(result)
        assert result.meta is not None
        record = ok(alice.get(f"/api/workflow-runs/{result.meta['memagent/workflow_run_id']}"))
    assert (record["workflow_id"], record["version"], record["status"]) == (workflow, 1, "succeeded")
    assert (record["inputs"], record["end_user"]) == ({"city": "Paris"}, "")


async def test_missing_and_mistyped_inputs_are_a_tool_error_naming_each(world: World) -> None:
    with api(world, world.alice) as alice:
        published(alice, "greet_checked")
    async with mcp_session(world, world.alice) as session:
        missing = await session.call_tool("greet_checked", {"town": "Paris"})
        mistyped = await session.call_tool("greet_checked", {"city": 3})
    assert missing.is_error
    assert text_of(missing).startswith("Error executing tool greet_checked: invalid_input: ")
    assert "inputs.city" in text_of(missing)
    assert "inputs.town" in text_of(missing)
    assert mistyped.is_error
    assert "inputs.city" in text_of(mistyped)


async def test_a_failed_run_and_an_unknown_tool_are_tool_errors_with_their_code(world: World) -> None:
    failing = simple(nodes=[SIMPLE["nodes"][0], {"id": "greet", "type": "code", "inputs": {},
                                                 "code": "def main():\n    raise ValueError('no greeting')\n"},
                            {"id": "end", "type": "end", "outputs": {"text": "{{ greet.text }}"}}])
    with api(world, world.alice) as alice:
        published(alice, "greet_failing", failing)
    async with mcp_session(world, world.alice) as session:
        failed = await session.call_tool("greet_failing", {"city": "Oslo"})
        unknown = await session.call_tool("no_such_workflow", {})
    assert failed.is_error
    assert text_of(failed).startswith("Error executing tool greet_failing: run_failed: The workflow run ")
    assert "ended failed" in text_of(failed)
    assert "no greeting" in text_of(failed)
    assert unknown.is_error
    assert text_of(unknown) == "not_found: Unknown tool: no_such_workflow."


async def test_another_account_cannot_call_an_accounts_workflow(world: World) -> None:
    with api(world, world.alice) as alice:
        workflow = published(alice, "greet_private")
    async with mcp_session(world, world.bob) as session:
        refused = await session.call_tool("greet_private", {"city": "Lima"})
    assert refused.is_error
    assert text_of(refused) == "not_found: Unknown tool: greet_private."
    assert runs_of(world, workflow) == []


async def test_a_call_its_client_gives_up_on_leaves_its_run_stopped(world: World) -> None:
    slow = simple(nodes=[SIMPLE["nodes"][0],
                         {"id": "greet", "type": "http_request", "method": "GET", "url": f"{world.site.url}slow",
                          "timeout": 30},
                         {"id": "end", "type": "end", "outputs": {"text": "{{ greet.status }}"}}])
    with api(world, world.alice) as alice:
        workflow = published(alice, "greet_slowly", slow)
        async with mcp_session(world, world.alice) as session:
            with anyio.move_on_after(2):
                await session.call_tool("greet_slowly", {"city": "Baku"})
        run_id = wait_until(lambda: runs_of(world, workflow), 10, "the run recorded")[0]
        record = f"/api/workflow-runs/{run_id}"
        assert wait_until(lambda: ok(alice.get(record))["status"] == "stopped" or None, 10, "the run stopped")


def runs_of(world: World, workflow_id: str) -> list[str]:
    """The ids of a workflow's runs: no route lists them, so they are read from the service's database."""
    with sqlite3.connect(world.database) as db:
        return [row[0] for row in db.execute("SELECT id FROM workflow_runs WHERE workflow_id = ?", (workflow_id,))]
