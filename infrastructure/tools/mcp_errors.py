"""How an MCP server's session fails: one plain line for any failure of a server. The exceptions
the session lifecycle raises inside itself (`StartFailed`, `Disconnected`) are in infrastructure/errors.py."""

from __future__ import annotations

import httpx2
from mcp import MCPError
from mcp.types import CONNECTION_CLOSED

from infrastructure.errors import StartFailed
from infrastructure.tools.mcp_config import McpServerConfig, Transport


def describe(error: BaseException, config: McpServerConfig | None = None) -> str:
    """One plain line for a failure, from the first real error inside anyio's exception groups."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    command = config.command if config is not None and config.transport is Transport.STDIO else None
    if isinstance(error, StartFailed):
        return error.reason
    if isinstance(error, FileNotFoundError):
        return f"command not found: {command or error.filename or error}"
    if isinstance(error, PermissionError):
        return f"not allowed to run: {command or error.filename or error}"
    if isinstance(error, MCPError):
        if error.code == CONNECTION_CLOSED:
            return "the server closed the connection (did it exit?)"
        return f"the server answered an error: {first_line(error.message)}"
    if isinstance(error, httpx2.HTTPStatusError):
        return f"HTTP {error.response.status_code} from {error.request.url}"
    if isinstance(error, httpx2.HTTPError):
        return f"cannot reach the server: {type(error).__name__}: {first_line(str(error))}"
    text = first_line(str(error))
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def first_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[0][:300] if lines else ""
