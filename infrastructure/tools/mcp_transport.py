"""How to reach an MCP server: the stdio or Streamable HTTP streams the official `mcp` SDK opens
to it (its configuration is mcp_config.py's)."""

from __future__ import annotations

import contextlib
import sys
from typing import TYPE_CHECKING, Any, TextIO

import httpx2
from mcp import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from infrastructure.tools.mcp_config import Transport

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from infrastructure.tools.mcp_config import McpServerConfig


class HttpRefusals:
    """Whether a Streamable HTTP server answered 401 or 403 since the last look. The SDK turns
    such an answer into a generic JSON-RPC error, so the status is noted on the way in."""

    def __init__(self) -> None:
        self._status: int | None = None

    async def note(self, response: httpx2.Response) -> None:
        if response.status_code in (401, 403):
            self._status = response.status_code

    def take(self) -> int | None:
        status, self._status = self._status, None
        return status


@contextlib.asynccontextmanager
async def open_streams(
    config: McpServerConfig, errlog: TextIO | None = None, refusals: HttpRefusals | None = None
) -> AsyncIterator[tuple[Any, Any]]:
    """The server's (read, write) streams: a child process over stdio, or Streamable HTTP."""
    if config.transport is Transport.STDIO:
        parameters = StdioServerParameters(
            command=config.command, args=list(config.args), env=dict(config.env) or None, cwd=config.cwd
        )
        async with stdio_client(parameters, errlog=errlog or sys.stderr) as streams:
            yield streams
        return
    timeout = httpx2.Timeout(config.startup_timeout, read=max(config.timeout, 300.0))
    async with (
        httpx2.AsyncClient(
            headers=dict(config.headers), timeout=timeout,
            event_hooks={"response": [refusals.note]} if refusals is not None else None,
        ) as http,
        streamable_http_client(config.url, http_client=http) as streams,
    ):
        yield streams
