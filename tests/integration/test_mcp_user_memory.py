"""memagent's MCP tools over memory that follows the user, driven with the official SDK client.

Without `conversation_id`, `get_memory` and `search_memory` read an end user's memory across their
conversations (`user`; omitted: the account itself); with one, `get_memory` carries that conversation's
end user's facts under `user_memory`. Streamable HTTP against PostgreSQL + Redis with API keys, the end
users' turns made through the HTTP API; stdio against SQLite for the account's own memory.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, TextContent

from tests.integration.backends import delete_prefix, memagent, migrate, new_prefix, pg_url, shared_redis_url
from tests.integration.backends import throwaway_pg_database as pg_database
from tests.service import ROOT, Service, running_service, service_env

pytestmark = pytest.mark.integration

ADA_SAYS = "Hi, my name is Ada and I live in Lisbon."
GRACE_SAYS = "Hello, my name is Grace and I live in Oslo."


def text_of(result: CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, TextContent))


def data(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, text_of(result)
    assert isinstance(result.structured_content, dict)
    return result.structured_content


def facts(memory: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f["type"]: f for f in memory["facts"]}


@dataclass(frozen=True)
class Said:
    conversation_id: str
    message_id: str


@dataclass(frozen=True)
class World:
    service: Service
    key: str
    ada_first: Said  # where Ada said her name and city
    ada_later: Said  # another conversation of hers
    grace: Said


def said(api: httpx.Client, query: str, user: str) -> Said:
    response = api.post("/api/chat", json={"query": query, "user": user})
    assert response.status_code == 200, response.text
    assert response.json()["status"] == "normal"
    return Said(response.json()["conversation_id"], response.json()["message_id"])


def remembered(memory: dict[str, Any], conversation_id: str) -> bool:
    """The upkeep after the turn (it runs after the answer) recorded the name and city and summarised."""
    return {"name", "city"} <= set(facts(memory)) and conversation_id in memory["conversations"]


def settled(api: httpx.Client, user: str, conversation: Said) -> None:
    deadline = time.monotonic() + 15
    while True:
        memory = api.get(f"/api/users/{user}/memory").json()
        if remembered(memory, conversation.conversation_id):
            return
        assert time.monotonic() < deadline, memory
        time.sleep(0.05)


def populate(service: Service, key: str) -> World:
    with httpx.Client(base_url=service.base_url, headers={"Authorization": f"Bearer {key}"}, timeout=30) as api:
        ada_first = said(api, ADA_SAYS, "ada")
        settled(api, "ada", ada_first)
        ada_later = said(api, "Book a table for tomorrow.", "ada")
        grace = said(api, GRACE_SAYS, "grace")
        settled(api, "grace", grace)
    return World(service, key, ada_first, ada_later, grace)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    folder = tmp_path_factory.mktemp("mcp-user-memory")
    redis_url, prefix = shared_redis_url(), new_prefix()
    with pg_database() as name:
        migrate(pg_url(name))
        env = {"MEMAGENT_DATABASE__URL": pg_url(name), "MEMAGENT_AUTH__REQUIRE_KEYS": "true",
               "MEMAGENT_MEMORY__BACKEND": "redis", "MEMAGENT_EVENTS__BACKEND": "redis",
               "MEMAGENT_REDIS__URL": redis_url, "MEMAGENT_REDIS__KEY_PREFIX": prefix}
        made = memagent(["keys", "create", "alice"], env)
        assert made.returncode == 0, made.stderr
        key = dict(line.split(maxsplit=1) for line in made.stdout.splitlines())["key"]
        try:
            with running_service(env, folder) as service:
                yield populate(service, key)
        finally:
            delete_prefix(redis_url, prefix)


@asynccontextmanager
async def mcp_over_http(world: World) -> AsyncIterator[ClientSession]:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {world.key}"}, timeout=30)
    url = f"{world.service.base_url}/mcp/"
    async with http, streamable_http_client(url, http_client=http) as streams, ClientSession(*streams) as session:
        await session.initialize()
        yield session


async def test_conversation_id_is_optional_and_user_is_offered(world: World) -> None:
    async with mcp_over_http(world) as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
    assert tools["get_memory"].input_schema.get("required", []) == []
    assert tools["search_memory"].input_schema["required"] == ["query"]
    for name in ("get_memory", "search_memory"):
        assert {"conversation_id", "user"} <= set(tools[name].input_schema["properties"])
        assert "end user" in (tools[name].description or "")


async def test_get_memory_of_a_user_returns_the_facts_said_in_their_conversations(world: World) -> None:
    async with mcp_over_http(world) as session:
        memory = data(await session.call_tool("get_memory", {"user": "ada"}))
    assert memory["user"] == "ada"
    known = facts(memory)
    assert (known["name"]["value"], known["city"]["value"]) == ("Ada", "Lisbon")
    for fact in (known["name"], known["city"]):  # provenance: where it was said
        assert fact["source_conversation_id"] == world.ada_first.conversation_id
        assert fact["source_message_id"] == world.ada_first.message_id
        assert fact["history"] == []
        assert fact["in_prompt"] is True
    assert world.ada_first.conversation_id in memory["conversations"]
    assert world.grace.conversation_id not in memory["conversations"]


async def test_a_conversations_memory_carries_its_end_users_facts_from_another_conversation(world: World) -> None:
    async with mcp_over_http(world) as session:
        memory = data(await session.call_tool("get_memory", {"conversation_id": world.ada_later.conversation_id}))
    assert memory["conversation_id"] == world.ada_later.conversation_id
    assert [t["query"] for t in memory["short_term"]] == ["Book a table for tomorrow."]
    assert memory["user_memory"]["user"] == "ada"
    name = facts(memory["user_memory"])["name"]
    assert (name["value"], name["source_conversation_id"]) == ("Ada", world.ada_first.conversation_id)
    assert "Grace" not in str(memory)


async def test_search_without_a_conversation_finds_an_earlier_conversations_turn_with_its_citation(
    world: World,
) -> None:
    async with mcp_over_http(world) as session:
        found = data(await session.call_tool("search_memory", {"query": "Which city does Ada live in?", "user": "ada"}))
        elsewhere = data(await session.call_tool("search_memory", {"query": "Oslo Grace", "user": "ada"}))
    assert (found["user"], found["query"]) == ("ada", "Which city does Ada live in?")
    turn = next(r for r in found["results"] if r["kind"] == "turn")
    assert turn["id"] == world.ada_first.message_id
    assert turn["conversation_id"] == world.ada_first.conversation_id
    assert turn["source_message_ids"] == [world.ada_first.message_id]
    assert turn["text"].startswith(ADA_SAYS)
    assert turn["score"] > 0
    ours = {world.ada_first.conversation_id, world.ada_later.conversation_id}
    assert {r["conversation_id"] for r in found["results"] + elsewhere["results"]} <= ours


async def test_another_end_users_memory_is_not_returned(world: World) -> None:
    theirs = world.grace.conversation_id
    async with mcp_over_http(world) as session:
        grace = data(await session.call_tool("get_memory", {"user": "grace"}))
        account = data(await session.call_tool("get_memory", {}))
        refused = [
            await session.call_tool("get_memory", {"conversation_id": theirs, "user": "ada"}),
            await session.call_tool("search_memory", {"conversation_id": theirs, "user": "ada", "query": "Oslo"}),
        ]
        nobody = data(await session.call_tool("search_memory", {"query": "Lisbon Oslo", "user": "nobody"}))
    assert {t: f["value"] for t, f in facts(grace).items()} == {"name": "Grace", "city": "Oslo"}
    assert grace["conversations"] == [theirs]
    # The account itself (no `user`) is an end user of its own: nothing its end users said.
    assert (account["user"], account["facts"], account["conversations"]) == ("", [], [])
    for result in refused:
        assert result.is_error
        assert "not_found" in text_of(result)
    assert nobody["results"] == []


@pytest.mark.parametrize("user", ["", "u" * 257, "nul\x00byte"])
async def test_a_bad_user_is_a_tool_error(world: World, user: str) -> None:
    async with mcp_over_http(world) as session:
        for tool, arguments in (("get_memory", {"user": user}),
                                ("get_memory", {"user": user, "conversation_id": world.ada_first.conversation_id}),
                                ("search_memory", {"user": user, "query": "Lisbon"})):
            result = await session.call_tool(tool, arguments)
            assert result.is_error, (tool, arguments)
            assert "invalid_input: user" in text_of(result)


async def test_top_k_out_of_range_across_conversations_is_a_tool_error(world: World) -> None:
    async with mcp_over_http(world) as session:
        result = await session.call_tool("search_memory", {"query": "Lisbon", "user": "ada", "top_k": 51})
    assert result.is_error
    assert "invalid_input: top_k must be within 1..50" in text_of(result)


def stdio_params(db_url: str) -> StdioServerParameters:
    env = service_env({"MEMAGENT_DATABASE__URL": db_url})
    env = {k: v for k, v in env.items() if k in ("PATH", "HOME", "LANG") or k.startswith("MEMAGENT_")}
    return StdioServerParameters(command=sys.executable, args=["-m", "interfaces.cli.main", "mcp"], env=env,
                                 cwd=str(ROOT))


async def account_memory(session: ClientSession, conversation_id: str) -> dict[str, Any]:
    """The account's own memory, once the upkeep after `chat` is done."""
    deadline = time.monotonic() + 15
    while True:
        memory = data(await session.call_tool("get_memory", {}))
        if remembered(memory, conversation_id) or time.monotonic() > deadline:
            return memory
        await asyncio.sleep(0.05)


async def test_over_stdio_the_accounts_own_memory_follows_it_into_a_new_conversation(tmp_path: Path) -> None:
    async with stdio_client(stdio_params(f"sqlite+aiosqlite:///{tmp_path / 'm.db'}")) as streams, \
            ClientSession(*streams) as session:
        await session.initialize()
        first = data(await session.call_tool("chat", {"query": ADA_SAYS}))
        memory = await account_memory(session, first["conversation_id"])
        later = data(await session.call_tool("chat", {"query": "Book a table for tomorrow."}))
        there = data(await session.call_tool("get_memory", {"conversation_id": later["conversation_id"]}))
        found = data(await session.call_tool("search_memory", {"query": "Lisbon", "top_k": 3}))
    assert memory["user"] == ""
    assert facts(memory)["city"]["value"] == "Lisbon"
    assert memory["conversations"] == [first["conversation_id"]]
    assert facts(there["user_memory"])["name"]["source_message_id"] == first["message_id"]
    assert [(r["kind"], r["conversation_id"], r["source_message_ids"]) for r in found["results"] if r["kind"] == "turn"
            ][:1] == [("turn", first["conversation_id"], [first["message_id"]])]
