"""`/mcp` served as `/mcp/`: MCP clients are configured with either, and a 307 to the other is not
followed by all of them (a POST's body would have to be sent again)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send

MCP_PATH = "/mcp"


class McpPath:
    """Routes a request for exactly `/mcp` as one for the mounted `/mcp/`, instead of redirecting it."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] == MCP_PATH:
            scope = {**scope, "path": MCP_PATH + "/", "raw_path": (MCP_PATH + "/").encode()}
        await self._app(scope, receive, send)
