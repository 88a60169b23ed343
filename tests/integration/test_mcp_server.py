"""memagent as an MCP server, driven with the official SDK client: `python -m interfaces.cli.main mcp` over
stdio, and the Streamable HTTP endpoint of the running service (API keys required)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client, ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, TextContent

from tests.service import ROOT, AccountKey, Service, create_account_key, running_service, service_env

pytestmark = pytest.mark.integration


def text_of(result: CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, TextContent))


def data(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, text_of(result)
    assert isinstance(result.structured_content, dict)
    return result.structured_content


def stdio_params(db_url: str, *args: str) -> StdioServerParameters:
    env = service_env({"MEMAGENT_DATABASE__URL": db_url})
    env = {k: v for k, v in env.items() if k in ("PATH", "HOME", "LANG") or k.startswith("MEMAGENT_")}
    return StdioServerParameters(command=sys.executable, args=["-m", "interfaces.cli.main", "mcp", *args], env=env,
                                 cwd=str(ROOT))


async def test_stdio_chat_memory_and_search_for_the_local_owner_and_another(tmp_path: Path) -> None:
    db_url = f"sqlite+aiosqlite:///{tmp_path / 'memagent.db'}"
    async with stdio_client(stdio_params(db_url)) as streams, ClientSession(*streams) as session:
        await session.initialize()
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert set(tools) == {"chat", "get_memory", "search_memory"}
        assert tools["chat"].input_schema["required"] == ["query"]

        first = data(await session.call_tool("chat", {"query": "My favourite colour is teal."}))
        assert first["status"] == "normal"
        assert "not a real LLM" in first["answer"]
        conversation = first["conversation_id"]
        second = data(await session.call_tool(
            "chat", {"query": "Parking is behind the building.", "conversation_id": conversation}
        ))
        assert second["conversation_id"] == conversation
        assert "My favourite colour is teal." in second["answer"]  # the scripted model names the earlier turn

        memory = data(await session.call_tool("get_memory", {"conversation_id": conversation}))
        assert [t["query"] for t in memory["short_term"]] == [
            "My favourite colour is teal.", "Parking is behind the building."
        ]
        assert "summary" in memory

        found = data(await session.call_tool(
            "search_memory", {"conversation_id": conversation, "query": "which colour", "top_k": 1}
        ))
        assert [r["query"] for r in found["results"]] == ["My favourite colour is teal."]

        missing = await session.call_tool("get_memory", {"conversation_id": "no-such-conversation"})
        assert missing.is_error
        assert "not_found" in text_of(missing)

        # `agent_id` picks the agent, its published config; the MCP entry point is recorded.
        named = data(await session.call_tool("chat", {"query": "Hello again.", "agent_id": "default"}))
        assert named["status"] == "normal"
        nobody = await session.call_tool("chat", {"query": "Hello?", "agent_id": "no-such-agent"})
        assert nobody.is_error
        assert "not_found" in text_of(nobody)

    # Another owner, same database: the conversation is not found, exactly like one that does not exist.
    async with stdio_client(stdio_params(db_url, "--owner", "bob")) as streams, ClientSession(*streams) as session:
        await session.initialize()
        theirs = await session.call_tool("get_memory", {"conversation_id": conversation})
        assert theirs.is_error
        assert "not_found" in text_of(theirs)


def test_an_invalid_owner_is_refused_before_serving(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "interfaces.cli.main", "mcp", "--owner", "two words"], cwd=ROOT, capture_output=True,
        text=True, timeout=60, check=False,
        env=service_env({"MEMAGENT_DATABASE__URL": f"sqlite+aiosqlite:///{tmp_path / 'm.db'}"}),
    )
    assert done.returncode == 2
    assert "owner id" in done.stderr
    assert done.stdout == ""


Key = AccountKey  # an account key, as `memagent keys create` makes it


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Service, Key, Key]]:
    folder = tmp_path_factory.mktemp("mcp-http")
    db_url = f"sqlite+aiosqlite:///{folder / 'memagent.db'}"
    alice, bob = create_account_key(db_url, "alice"), create_account_key(db_url, "bob")
    env = {"MEMAGENT_DATABASE__URL": db_url, "MEMAGENT_AUTH__REQUIRE_KEYS": "true"}
    with running_service(env, folder) as service:
        yield service, alice, bob


def session_for(service: Service, key: Key) -> tuple[httpx2.AsyncClient, str]:
    return httpx2.AsyncClient(headers={"Authorization": f"Bearer {key.raw}"}, timeout=30), f"{service.base_url}/mcp/"


def test_the_http_endpoint_refuses_a_request_without_a_valid_key(keyed: tuple[Service, Key, Key]) -> None:
    service = keyed[0]
    for headers in ({}, {"Authorization": "Bearer mk_not-a-real-key"}):
        response = httpx.post(f"{service.base_url}/mcp/", headers=headers, timeout=10,
                              json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})
        assert response.status_code == 401
        metadata_url = f"{service.base_url}/.well-known/oauth-protected-resource/mcp"
        assert response.headers["www-authenticate"] == f'Bearer resource_metadata="{metadata_url}"'
        assert response.json()["code"] == "unauthorized"
    metadata = httpx.get(metadata_url, timeout=10)  # open, as RFC 9728 wants: a client without a key reads it
    assert metadata.status_code == 200
    assert metadata.json()["resource"] == f"{service.base_url}/mcp"
    assert metadata.json()["bearer_methods_supported"] == ["header"]
    assert "memagent keys create" in metadata.json()["memagent_how_to_authenticate"]


async def test_the_http_endpoint_acts_for_the_keys_owner(keyed: tuple[Service, Key, Key]) -> None:
    service, alice, bob = keyed
    http, url = session_for(service, alice)
    async with http, streamable_http_client(url, http_client=http) as streams, ClientSession(*streams) as session:
        await session.initialize()
        assert {t.name for t in (await session.list_tools()).tools} == {"chat", "get_memory", "search_memory"}
        said = data(await session.call_tool("chat", {"query": "Remember: the wifi password is on the fridge."}))
        conversation = said["conversation_id"]
        memory = data(await session.call_tool("get_memory", {"conversation_id": conversation}))
        assert memory["short_term"][0]["query"] == "Remember: the wifi password is on the fridge."
        found = data(await session.call_tool("search_memory", {"conversation_id": conversation, "query": "wifi"}))
        assert len(found["results"]) == 1

    # The conversation is alice's: through the HTTP API and through MCP, bob does not find it.
    async with httpx.AsyncClient(base_url=service.base_url, timeout=10) as api:
        listing = await api.get(f"/api/conversations/{conversation}/messages",
                                headers={"Authorization": f"Bearer {alice.raw}"})
        assert listing.status_code == 200
        theirs = await api.get(f"/api/conversations/{conversation}/messages",
                               headers={"Authorization": f"Bearer {bob.raw}"})
        assert theirs.status_code == 404
    http, url = session_for(service, bob)
    async with http, streamable_http_client(url, http_client=http) as streams, ClientSession(*streams) as session:
        await session.initialize()
        for tool, arguments in (
            ("get_memory", {"conversation_id": conversation}),
            ("search_memory", {"conversation_id": conversation, "query": "wifi"}),
            ("chat", {"query": "and now?", "conversation_id": conversation}),
        ):
            refused = await session.call_tool(tool, arguments)
            assert refused.is_error, tool
            assert "not_found" in text_of(refused)
    assert alice.raw not in service.log()
    assert bob.raw not in service.log()


def rpc(service: Service, key: Key, path: str, method: str, params: dict[str, Any]) -> httpx.Response:
    """One JSON-RPC request to the stateless endpoint, as a client without a session sends it."""
    headers = {"Authorization": f"Bearer {key.raw}", "Accept": "application/json, text/event-stream",
               "MCP-Protocol-Version": "2025-11-25"}
    body = {"jsonrpc": "2.0", "id": 7, "method": method, "params": params}
    return httpx.post(f"{service.base_url}{path}", headers=headers, json=body, timeout=10, follow_redirects=False)


def rpc_answer(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    if response.headers["content-type"].startswith("text/event-stream"):
        data = [line.removeprefix("data:").strip() for line in response.text.splitlines() if line.startswith("data:")]
        return dict(json.loads(data[-1]))
    return dict(response.json())


INITIALIZE = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "probe", "version": "1"}}


@pytest.mark.parametrize("path", ["/mcp", "/mcp/"])
def test_the_http_endpoint_answers_with_and_without_the_slash(keyed: tuple[Service, Key, Key], path: str) -> None:
    service, alice, _ = keyed
    answer = rpc_answer(rpc(service, alice, path, "initialize", INITIALIZE))
    assert answer["result"]["serverInfo"]["name"] == "memagent"


def test_an_unknown_prompt_is_invalid_params_and_logs_no_traceback(keyed: tuple[Service, Key, Key]) -> None:
    service, alice, _ = keyed
    for _ in range(3):
        answer = rpc_answer(rpc(service, alice, "/mcp", "prompts/get", {"name": "no-such-prompt"}))
        assert answer["error"]["code"] == -32602
        assert "no-such-prompt" in answer["error"]["message"]
    assert "Traceback" not in service.log()


def test_a_repeated_unknown_tool_is_logged_once_and_malformed_json_rpc_logs_no_traceback(
    keyed: tuple[Service, Key, Key],
) -> None:
    service, alice, _ = keyed
    start = len(service.log())
    for _ in range(20):
        answer = rpc_answer(rpc(service, alice, "/mcp", "tools/call", {"name": "no-such-tool", "arguments": {}}))
        assert answer["result"]["isError"] is True
    headers = {"Authorization": f"Bearer {alice.raw}", "Accept": "application/json, text/event-stream",
               "Content-Type": "application/json"}
    for body, code in (("{not json", -32700), ("[" * 30_000 + "]" * 30_000, -32700),
                       (json.dumps({"jsonrpc": "1.0", "id": 1}), -32602)):
        refused = httpx.post(f"{service.base_url}/mcp/", headers=headers, content=body, timeout=10)
        assert (refused.status_code, refused.json()["error"]["code"]) == (400, code)
    assert rpc_answer(rpc(service, alice, "/mcp", "no/such", {}))["error"]["code"] == -32601
    written = service.log()[start:]
    assert written.count("'no-such-tool'") <= 1, written  # once a minute at most, not once per call
    assert "Traceback" not in written


@pytest.mark.parametrize(("mode", "revision"), [("legacy", "2025-11-25"), ("2026-07-28", "2026-07-28"),
                                                ("auto", "2026-07-28")])
async def test_both_protocol_revisions_are_served_on_one_endpoint(
    keyed: tuple[Service, Key, Key], mode: str, revision: str
) -> None:
    """The initialize handshake of 2025-11-25, and the stateless 2026-07-28 revision (no handshake,
    `server/discover` when the client probes), with the same key and tools."""
    service, alice, _ = keyed
    http, url = session_for(service, alice)
    async with http, Client(streamable_http_client(url, http_client=http), mode=mode) as client:
        assert {t.name for t in (await client.list_tools()).tools} == {"chat", "get_memory", "search_memory"}
        assert data(await client.call_tool("chat", {"query": f"Hello at {revision}."}))["status"] == "normal"
        assert client.session.protocol_version == revision
