"""MCP tools in real turns: the running `memagent serve`, with `mcp-server-time` over stdio, the SDK-written
fixture over Streamable HTTP, and a server whose command does not exist. The offline scripted model
calls a tool when the query holds `[[tool:NAME {...}]]`."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.mcp_servers import http_mcp_server
from tests.service import Service, running_service

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    folder = tmp_path_factory.mktemp("mcp-turns")
    with http_mcp_server() as url:
        servers = [
            {"name": "time", "transport": "stdio", "command": sys.executable,
             "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]},
            {"name": "remote", "transport": "http", "url": url, "headers": {"X-Test": "1"}},
            {"name": "broken", "transport": "stdio", "command": "/nonexistent/mcp-server"},
        ]
        env = {
            "MEMAGENT_DATABASE__URL": f"sqlite+aiosqlite:///{folder / 'memagent.db'}",
            "MEMAGENT_MCP__SERVERS": json.dumps(servers),
            "MEMAGENT_AGENT__TOOLS": json.dumps(["current_time", "calculator", "get_current_time", "remote.*",
                                                 "broken.*"]),
            "MEMAGENT_TURN__TOOL_TIMEOUT": "1",
            "MEMAGENT_TURN__TOOL_RETRIES": "0",
        }
        with running_service(env, folder) as running:
            yield running


@pytest.fixture
def client(service: Service) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=service.base_url, timeout=30) as http:
        yield http


def turn(client: httpx.Client, query: str) -> dict[str, Any]:
    response = client.post("/api/chat", json={"query": query})
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    assert answer["status"] == "normal", answer
    return answer


def actions(answer: dict[str, Any]) -> list[dict[str, Any]]:
    return [t for t in answer["thoughts"] if t["event"] == "agent_action"]


def test_healthz_reports_each_mcp_server_and_a_broken_one_does_not_make_memagent_unhealthy(
    client: httpx.Client,
) -> None:
    health = client.get("/healthz").json()
    assert health["status"] == "ok"
    mcp = health["mcp"]
    assert mcp["time"]["state"] == "ready"
    assert set(mcp["time"]["tools"]) == {"get_current_time", "convert_time"}
    assert mcp["remote"] == {"transport": "http", "state": "ready", "tools": mcp["remote"]["tools"], "error": ""}
    assert "echo" in mcp["remote"]["tools"]
    assert mcp["broken"] == {
        "transport": "stdio", "state": "failed", "tools": [], "error": "command not found: /nonexistent/mcp-server"
    }


def test_a_turn_calls_mcp_server_time_over_stdio_and_persists_the_agent_action_step(
    client: httpx.Client, service: Service
) -> None:
    answer = turn(client, 'What time is it in Paris? [[tool:get_current_time {"timezone": "Europe/Paris"}]]')
    [action] = actions(answer)
    assert (action["tool"], action["tool_input"]) == ("get_current_time", {"timezone": "Europe/Paris"})
    observed = json.loads(action["observation"])
    assert observed["timezone"] == "Europe/Paris"
    assert "Europe/Paris" in answer["answer"]

    # The record keeps the round (the calls and what each returned, keyed by tool) and each call's own step.
    steps = client.get(f"/api/messages/{answer['message_id']}/thoughts").json()["data"]
    [stored] = [s for s in steps if s["event"] == "agent_thought" and s["tool"]]
    assert stored["tool"] == "get_current_time"
    assert stored["tool_input"] == {"get_current_time": {"timezone": "Europe/Paris"}}
    assert json.loads(json.loads(stored["observation"])["get_current_time"])["timezone"] == "Europe/Paris"
    [persisted_action] = [s for s in steps if s["event"] == "agent_action"]
    assert (persisted_action["tool"], persisted_action["tool_input"]) == (
        "get_current_time", {"timezone": "Europe/Paris"}
    )
    assert json.loads(persisted_action["observation"])["timezone"] == "Europe/Paris"
    assert "MCP server broken" in service.log()  # the misconfigured server was reported at start-up


def test_built_in_tools_still_work_beside_a_broken_server(client: httpx.Client) -> None:
    answer = turn(client, '[[tool:current_time {"timezone": "Asia/Tokyo"}]]')
    assert json.loads(actions(answer)[0]["observation"])["datetime"].endswith("+09:00")
    answer = turn(client, '[[tool:calculator {"expression": "12 * (3 + 4)"}]]')
    assert json.loads(actions(answer)[0]["observation"])["result"] == "84"


def test_an_http_server_tool_that_reports_an_error_is_a_plain_failure_for_the_model(client: httpx.Client) -> None:
    answer = turn(client, '[[tool:fail {"reason": "the vault is locked"}]]')
    [action] = actions(answer)
    assert action["observation"].startswith("Tool 'fail' failed:")
    assert "the vault is locked" in action["observation"]
    echo = turn(client, '[[tool:echo {"text": "over http"}]]')
    assert actions(echo)[0]["observation"] == "echo: over http"


def test_a_hanging_tool_is_bounded_by_the_tool_timeout(client: httpx.Client) -> None:
    began = time.monotonic()
    answer = turn(client, "[[tool:hang]]")
    assert time.monotonic() - began < 8
    [action] = actions(answer)
    assert action["observation"] == "Tool 'hang' is temporarily unavailable. Answer without it."
    # Its name clashes with a built-in, so the fixture's own clock is offered as remote.current_time.
    clash = turn(client, "[[tool:remote.current_time]]")
    assert actions(clash)[0]["observation"] == "fixture time"
