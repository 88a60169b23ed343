"""An MCP server for tests, written with the SDK: `python -m tests.mcp_servers` runs it on stdio;
`http_mcp_server()` runs it over Streamable HTTP with uvicorn in a thread, on a free port.

Tools: `echo` (text), `add` (structured), `fail` (is_error), `hang` (never answers), `pixel`
(an image), `die` (the process exits: a dead stdio session), `guarded` (refuses permission),
`secret` (over HTTP, refused with a 403 by a gateway in front of the server), and `current_time`,
whose name clashes with memagent's built-in.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn
from mcp.server.mcpserver import Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from tests.service import free_port

# A 1x1 transparent PNG.
PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
)


def build_server(name: str = "fixture") -> MCPServer:
    server = MCPServer(name, log_level="WARNING")

    @server.tool()
    def echo(text: str) -> str:
        """Repeat the text."""
        return f"echo: {text}"

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool()
    def fail(reason: str) -> str:
        """Always fails with the given reason."""
        raise ToolError(f"refused: {reason}")

    @server.tool()
    async def hang() -> str:
        """Never answers."""
        await asyncio.sleep(3600)
        return "late"

    @server.tool()
    def pixel() -> Image:
        """A tiny image."""
        return Image(data=PIXEL, format="png")

    @server.tool()
    def die() -> str:
        """Ends the server process at once."""
        os._exit(3)

    @server.tool()
    def current_time() -> str:
        """The fixture's own clock (clashes with memagent's built-in)."""
        return "fixture time"

    @server.tool()
    def guarded(path: str) -> str:
        """Refuses the caller, as a server with per-tool permissions does."""
        raise ToolError(f"Permission denied: this caller may not read {path}")

    @server.tool()
    def secret() -> str:
        """Over HTTP, the gateway in front of the fixture answers 403 to calls of this tool."""
        return "the secret"

    @server.tool()
    def pid() -> int:
        """The server's process id."""
        return os.getpid()

    return server


def refusing_gateway(app: ASGIApp, tool: str) -> ASGIApp:
    """An ASGI app in front of `app` that answers 403 to every `tools/call` of `tool`, as an
    authorising proxy does, and passes everything else through."""

    async def gateway(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await app(scope, receive, send)
            return
        chunks, more = [], True
        while more:
            message = await receive()
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        body = b"".join(chunks)
        try:
            request = json.loads(body)
        except ValueError:
            request = {}
        if isinstance(request, dict) and request.get("method") == "tools/call" and \
                (request.get("params") or {}).get("name") == tool:
            await send({"type": "http.response.start", "status": 403,
                        "headers": [(b"content-type", b"text/plain")]})
            await send({"type": "http.response.body", "body": b"Forbidden"})
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await app(scope, replay, send)

    return gateway


@contextmanager
def http_mcp_server(name: str = "fixture") -> Iterator[str]:
    """Serve the fixture over Streamable HTTP; yields its URL (`http://127.0.0.1:PORT/mcp`)."""
    server = build_server(name)
    app = server.streamable_http_app(
        streamable_http_path="/mcp",
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    app = refusing_gateway(app, "secret")
    port = free_port()
    # Open SSE streams (a hanging tool's) get a moment to close at shutdown, then are cut.
    config = uvicorn.Config(
        app, host="127.0.0.1", port=port, log_level="warning", lifespan="on", timeout_graceful_shutdown=2
    )
    runner = uvicorn.Server(config)
    thread = threading.Thread(target=runner.run, daemon=True, name=f"mcp-http-{port}")
    thread.start()
    deadline = time.monotonic() + 10
    while not runner.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the HTTP MCP fixture did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        runner.should_exit = True
        thread.join(timeout=10)


if __name__ == "__main__":
    build_server(sys.argv[1] if len(sys.argv) > 1 else "fixture").run()
