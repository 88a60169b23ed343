"""MCP servers as tools, on the official `mcp` SDK: stdio and Streamable HTTP.

Every configured server (`mcp_session.McpServer`) is started together, retried in the
background and closed together.

- Start-up never fails because of a server: one that cannot start (bad command, refuses to
  start, hangs in `initialize` past `startup_timeout`) is logged, reported as `failed` in
  `statuses()`, and retried every `retry_interval` seconds; the other tools keep working and a
  call to its tools fails with UNAVAILABLE ("temporarily unavailable").
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING, Any, TextIO

from infrastructure.tools.mcp_config import ServerState

if TYPE_CHECKING:
    from collections.abc import Sequence

    from application.ports.tool_servers import ToolServerStatus
    from infrastructure.tools.mcp_config import McpServerConfig
    from infrastructure.tools.mcp_session import McpServer

log = logging.getLogger(__name__)


class McpServers:
    """Every configured MCP server: started together, retried in the background, closed together."""

    def __init__(
        self, configs: Sequence[McpServerConfig], retry_interval: float = 30.0, errlog: TextIO | None = None
    ) -> None:
        self._servers: dict[str, McpServer] = {}
        if configs:  # the SDK is imported only by a process that has MCP servers to reach
            from infrastructure.tools.mcp_session import McpServer

            self._servers = {config.name: McpServer(config, errlog) for config in configs}
        self._retry_interval = retry_interval
        self._retrying: asyncio.Task[None] | None = None

    def __iter__(self) -> Any:
        return iter(self._servers.values())

    def get(self, name: str) -> McpServer | None:
        return self._servers.get(name)

    @property
    def names(self) -> list[str]:
        return list(self._servers)

    def statuses(self) -> list[ToolServerStatus]:
        return [server.status() for server in self._servers.values()]

    async def start(self) -> None:
        """Open every session at once; a server that fails is logged and retried, never fatal."""
        if not self._servers:
            return
        await asyncio.gather(*(server.connect() for server in self._servers.values()))
        if self._retrying is None and self._retry_interval > 0:
            self._retrying = asyncio.create_task(self._retry_forever(), name="mcp-retry")

    async def close(self) -> None:
        if self._retrying is not None:
            self._retrying.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._retrying
            self._retrying = None
        await asyncio.gather(*(server.close() for server in self._servers.values()))

    async def retry_failed(self) -> None:
        """Reopen the servers that failed or died, once `retry_interval` has passed since their last try."""
        due = [
            server for server in self._servers.values()
            if server.state is ServerState.FAILED and server.seconds_since_attempt() >= self._retry_interval
        ]
        await asyncio.gather(*(server.connect() for server in due))

    async def _retry_forever(self) -> None:
        while True:
            await asyncio.sleep(min(self._retry_interval, 5.0))
            try:
                await self.retry_failed()
            except Exception:  # the loop must outlive any one failure
                log.exception("retrying MCP servers failed")
