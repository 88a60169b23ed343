"""memagent's MCP ToolBox against real MCP servers: `mcp-server-time` and the SDK-written fixture of
tests/mcp_servers.py, over stdio (child processes) and Streamable HTTP (uvicorn on 127.0.0.1)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
from collections.abc import AsyncIterator, Iterator

import pytest

from application.chat_turn.tool_executor import ToolExecutor
from application.errors import ToolCallFailed
from domain.tools.calls import RetryPolicy, ToolCall, ToolFailure
from infrastructure.metrics.inprocess_metrics import InProcessMetrics
from infrastructure.tools.builtin import builtin_tools
from infrastructure.tools.composite import CompositeToolBox
from infrastructure.tools.mcp_client import McpServers
from infrastructure.tools.mcp_config import McpServerConfig, Transport, server_configs
from tests.mcp_servers import http_mcp_server
from tests.service import ROOT

pytestmark = pytest.mark.integration

TIME = McpServerConfig("time", Transport.STDIO, sys.executable, ("-m", "mcp_server_time", "--local-timezone", "UTC"))
LOCAL = McpServerConfig("local", Transport.STDIO, sys.executable, ("-m", "tests.mcp_servers"), cwd=str(ROOT))


@pytest.fixture(scope="module")
def fixture_url() -> Iterator[str]:
    with http_mcp_server() as url:
        yield url


async def started(*configs: McpServerConfig) -> CompositeToolBox:
    servers = McpServers(configs, retry_interval=0)
    await servers.start()
    return CompositeToolBox(builtin_tools(), servers)


@pytest.fixture
async def time_box() -> AsyncIterator[CompositeToolBox]:
    box = await started(TIME)
    yield box
    await box.servers.close()


async def invoke(box: CompositeToolBox, name: str, **arguments: object) -> str:
    return await box.invoke(ToolCall("c1", name, arguments))


async def failure(box: CompositeToolBox, name: str, **arguments: object) -> ToolCallFailed:
    with pytest.raises(ToolCallFailed) as failed:
        await invoke(box, name, **arguments)
    return failed.value


async def test_mcp_server_time_over_stdio_lists_and_calls_its_tools(time_box: CompositeToolBox) -> None:
    [status] = time_box.servers.statuses()
    assert (status.name, status.transport, status.state) == ("time", "stdio", "ready")
    assert set(status.tools) == {"get_current_time", "convert_time"}
    specs = time_box.specs(["current_time", "get_current_time"])
    assert [s.name for s in specs] == ["current_time", "get_current_time"]
    assert specs[1].parameters["required"] == ["timezone"]
    assert {s.name for s in time_box.specs(["time.*"])} == {"get_current_time", "convert_time"}
    assert time_box.specs(["time.get_current_time"]) == [specs[1]]

    paris = json.loads(await invoke(time_box, "get_current_time", timezone="Europe/Paris"))
    assert paris["timezone"] == "Europe/Paris"
    assert paris["datetime"][-6:] in ("+01:00", "+02:00")
    assert json.loads(await invoke(time_box, "time.get_current_time", timezone="UTC"))["timezone"] == "UTC"


async def test_bad_arguments_are_invalid_arguments_whoever_finds_them(time_box: CompositeToolBox) -> None:
    missing = await failure(time_box, "get_current_time")  # found by our validator: no call made
    assert (missing.failure, missing.detail) == (ToolFailure.INVALID_ARGUMENTS, "'timezone' is required")
    unknown = await failure(time_box, "get_current_time", timezone="Mars/Olympus")  # is_error from the server
    assert unknown.failure is ToolFailure.INVALID_ARGUMENTS
    assert "Mars/Olympus" in unknown.detail


async def test_results_errors_images_and_names_over_streamable_http_and_stdio(fixture_url: str) -> None:
    remote = McpServerConfig("remote", Transport.HTTP, url=fixture_url, timeout=10)
    box = await started(remote, LOCAL)
    try:
        assert [s.state for s in box.servers.statuses()] == ["ready", "ready"]
        names = [s.name for s in box.specs(["current_time", "remote.*", "local.*"])]
        # Both servers have the same tools: each is namespaced; the built-in keeps its own name.
        assert names[0] == "current_time"
        assert {"remote.echo", "local.echo", "remote.current_time", "local.current_time"} <= set(names)
        assert "echo" not in names
        assert await invoke(box, "remote.echo", text="hi") == "echo: hi"
        assert await invoke(box, "local.echo", text="hi") == "echo: hi"
        assert await invoke(box, "remote.add", a=2, b=3) == "5"
        assert json.loads(await invoke(box, "current_time"))["timezone"] == "UTC"
        assert await invoke(box, "remote.current_time") == "fixture time"
        assert await invoke(box, "remote.pixel") == "[image: image/png, 69 bytes, not shown]"

        refused = await failure(box, "remote.fail", reason="no access to that folder")
        assert refused.failure is ToolFailure.FAILED
        assert "refused: no access to that folder" in refused.detail
        typed = await failure(box, "remote.add", a="two", b=3)
        assert (typed.failure, typed.detail) == (ToolFailure.INVALID_ARGUMENTS, "'a' must be an integer, not a string")
        unknown = await failure(box, "remote.nope")
        assert unknown.failure is ToolFailure.UNKNOWN_TOOL
    finally:
        await box.servers.close()


async def test_a_refused_permission_and_an_http_403_are_permission_denied_never_retried(fixture_url: str) -> None:
    remote = McpServerConfig("remote", Transport.HTTP, url=fixture_url, timeout=10)
    box = await started(remote, LOCAL)
    try:
        for name in ("remote.guarded", "local.guarded"):  # the tool's own error says so
            said = await failure(box, name, path="/etc/shadow")
            assert said.failure is ToolFailure.PERMISSION_DENIED, said.detail
        forbidden = await failure(box, "remote.secret")  # the gateway answers HTTP 403
        assert forbidden.failure is ToolFailure.PERMISSION_DENIED
        assert "403" in forbidden.detail
        assert await invoke(box, "local.secret") == "the secret"  # stdio has no gateway
        assert await invoke(box, "remote.echo", text="still here") == "echo: still here"

        executor = ToolExecutor(
            box, RetryPolicy(timeout_retries=2, retry_delay=0.0), timeout=5, metrics=InProcessMetrics(), offered=()
        )
        attempts = 0
        invoke_once = box.invoke

        async def counted(call: ToolCall) -> str:
            nonlocal attempts
            attempts += 1
            return await invoke_once(call)

        box.invoke = counted  # type: ignore[method-assign]
        result = await executor.run(ToolCall("c9", "remote.secret", {}))
        assert attempts == 1
        assert result.failure is ToolFailure.PERMISSION_DENIED
        assert result.output == "Permission to use tool 'remote.secret' was denied. Do not try it again."
    finally:
        await box.servers.close()


async def test_a_server_set_sequential_offers_its_tools_as_sequential(fixture_url: str) -> None:
    writes = McpServerConfig("writes", Transport.HTTP, url=fixture_url, timeout=10, sequential=True)
    box = await started(writes, LOCAL)
    try:
        specs = {s.name: s.sequential for s in box.specs(["current_time", "writes.*", "local.*"])}
        assert specs["writes.echo"] is True
        assert specs["local.echo"] is False
        assert specs["current_time"] is False  # the built-in
    finally:
        await box.servers.close()


def test_the_sequential_setting_is_read_from_the_mcp_settings() -> None:
    [config] = server_configs({"servers": [{"name": "w", "transport": "http", "url": "http://x/mcp",
                                            "sequential": True}]})
    assert config.sequential is True


async def test_a_hanging_tool_is_bounded_by_the_tool_timeout_and_the_session_stays_usable(fixture_url: str) -> None:
    box = await started(McpServerConfig("remote", Transport.HTTP, url=fixture_url), LOCAL)
    executor = ToolExecutor(
        box, RetryPolicy(timeout_retries=1, retry_delay=0.0), timeout=0.5, metrics=InProcessMetrics(), offered=()
    )
    try:
        for name in ("remote.hang", "local.hang"):
            began = time.monotonic()
            result = await executor.run(ToolCall("c1", name, {}))
            assert time.monotonic() - began < 3  # two attempts of 0.5 s
            assert result.failure is ToolFailure.TIMEOUT
            assert result.output == f"Tool '{name}' is temporarily unavailable. Answer without it."
        assert await invoke(box, "remote.echo", text="still here") == "echo: still here"
        assert await invoke(box, "local.echo", text="still here") == "echo: still here"
    finally:
        await box.servers.close()


async def test_the_servers_own_call_timeout_is_a_timeout_too(fixture_url: str) -> None:
    box = await started(McpServerConfig("remote", Transport.HTTP, url=fixture_url, timeout=0.5))
    try:
        slow = await failure(box, "remote.hang")
        assert (slow.failure, slow.detail) == (ToolFailure.TIMEOUT, "no answer within 0.5 s")
    finally:
        await box.servers.close()


async def test_a_dead_stdio_server_is_restarted_by_the_next_call_or_the_retry() -> None:
    box = await started(LOCAL)
    try:
        first = int(await invoke(box, "local.pid"))
        died = await failure(box, "local.die")  # it dies, is restarted once, and dies again
        assert died.failure is ToolFailure.UNAVAILABLE
        second = int(await invoke(box, "local.pid"))  # the call reconnects
        assert second != first

        os.kill(second, signal.SIGKILL)
        for _ in range(200):  # the transport sees the pipe close within moments
            if box.servers.statuses()[0].state == "failed":
                break
            await asyncio.sleep(0.05)
        status = box.servers.statuses()[0]
        assert (status.state, status.error) == ("failed", "the server closed the connection")
        await box.servers.retry_failed()
        assert box.servers.statuses()[0].state == "ready"
        assert int(await invoke(box, "local.pid")) not in (first, second)
    finally:
        await box.servers.close()


async def test_misconfigured_servers_are_reported_and_leave_the_other_tools_working() -> None:
    bad = McpServerConfig("bad", Transport.STDIO, "/nonexistent/mcp-server")
    exits = McpServerConfig("exits", Transport.STDIO, sys.executable, ("-c", "print('not a server')"))
    hangs = McpServerConfig("hangs", Transport.STDIO, sys.executable, ("-c", "import time; time.sleep(60)"),
                            startup_timeout=1.0)
    nothing = McpServerConfig("nothing", Transport.HTTP, url="http://127.0.0.1:9/mcp", startup_timeout=2.0)
    began = time.monotonic()
    box = await started(bad, exits, hangs, nothing, TIME)
    try:
        assert time.monotonic() - began < 15  # every start is bounded, and they run side by side
        states = {s.name: (s.state, s.error) for s in box.servers.statuses()}
        assert states["bad"] == ("failed", "command not found: /nonexistent/mcp-server")
        assert states["exits"][0] == "failed"
        assert states["hangs"] == ("failed", "did not finish starting (initialize, tools/list) within 1 s")
        assert states["nothing"][0] == "failed"
        assert states["nothing"][1].startswith("cannot reach the server")
        assert states["time"] == ("ready", "")

        gone = await failure(box, "bad.anything")
        assert gone.failure is ToolFailure.UNAVAILABLE
        assert "command not found" in gone.detail
        assert json.loads(await invoke(box, "current_time"))["timezone"] == "UTC"
        assert json.loads(await invoke(box, "get_current_time", timezone="UTC"))["timezone"] == "UTC"
        assert [s.name for s in box.specs(["bad.*", "current_time"])] == ["current_time"]
    finally:
        await box.servers.close()
