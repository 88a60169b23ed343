"""MCP `tools/call` results as the text a model reads, and errors as the failure policy's kinds."""

from __future__ import annotations

import pytest
from mcp.types import (
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    TextContent,
    TextResourceContents,
)

from application.errors import ToolCallFailed
from domain.tools.calls import ToolFailure
from infrastructure.tools.mcp_config import McpServerConfig, Transport, server_configs
from infrastructure.tools.mcp_results import tool_output


def test_text_blocks_are_joined_and_other_media_become_short_notes() -> None:
    result = CallToolResult(content=[
        TextContent(text="first"),
        ImageContent(data="aGVsbG8=", mime_type="image/png"),
        EmbeddedResource(resource=TextResourceContents(uri="file:///a.txt", text="inside")),
        EmbeddedResource(resource=BlobResourceContents(uri="file:///b.bin", blob="AAAA", mime_type="x/bin")),
    ])
    assert tool_output(result).splitlines() == [
        "first", "[image: image/png, 6 bytes, not shown]", "inside", "[resource: file:///b.bin (x/bin), not shown]"
    ]


def test_structured_content_is_sent_as_json_when_there_is_no_text() -> None:
    assert tool_output(CallToolResult(content=[], structured_content={"result": 3})) == '{"result": 3}'


@pytest.mark.parametrize(
    ("text", "arguments", "failure"),
    [
        ("1 validation error for add\na\n  Input should be a valid integer", {"a": "x"}, ToolFailure.INVALID_ARGUMENTS),
        ("Invalid timezone: 'No time zone found with key Mars/X'", {"timezone": "Mars/X"},
         ToolFailure.INVALID_ARGUMENTS),
        ("Invalid response from the upstream service", {"city": "Paris"}, ToolFailure.FAILED),
        ("Error executing tool fail: refused", {}, ToolFailure.FAILED),
        ("Permission denied: this caller may not read /etc/shadow", {"path": "/etc/shadow"},
         ToolFailure.PERMISSION_DENIED),
        ("Unauthorized: the token has expired", {}, ToolFailure.PERMISSION_DENIED),
        ("Authorization failed for repository acme/app", {}, ToolFailure.PERMISSION_DENIED),
        ("HTTP 403 from the API", {}, ToolFailure.PERMISSION_DENIED),
        ("insufficient scope: repo:write required", {}, ToolFailure.PERMISSION_DENIED),
    ],
)
def test_is_error_results_fail_the_call_as_permission_denied_invalid_arguments_or_failed(
    text: str, arguments: dict[str, object], failure: ToolFailure
) -> None:
    with pytest.raises(ToolCallFailed) as failed:
        tool_output(CallToolResult(content=[TextContent(text=text)], is_error=True), arguments)
    assert (failed.value.failure, failed.value.detail) == (failure, text)


def test_server_settings_become_configs_and_are_checked() -> None:
    [stdio, http] = server_configs({
        "startup_timeout": 3,
        "servers": [
            {"name": "time", "transport": "stdio", "command": "mcp-server-time", "args": ["--local-timezone", "UTC"],
             "env": {"TZ": "UTC"}},
            {"name": "wiki", "transport": "http", "url": "https://mcp.example.com/mcp", "headers": {"X": "1"},
             "timeout": 5},
        ],
    })
    assert (stdio.command, stdio.args, stdio.startup_timeout, stdio.timeout) == (
        "mcp-server-time", ("--local-timezone", "UTC"), 3.0, 30.0
    )
    assert (http.transport, http.url, http.timeout, http.where) == (
        Transport.HTTP, "https://mcp.example.com/mcp", 5.0, "https://mcp.example.com/mcp"
    )
    assert "X" not in repr(http)  # headers (and env) may hold secrets
    with pytest.raises(ValueError, match="unique"):
        server_configs({"servers": [{"name": "a", "command": "x"}, {"name": "a", "command": "y"}]})
    with pytest.raises(ValueError, match="needs a command"):
        McpServerConfig("a", Transport.STDIO)
    with pytest.raises(ValueError, match="letters, digits"):
        McpServerConfig("a.b", Transport.STDIO, "x")
