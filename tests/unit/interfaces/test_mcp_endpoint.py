"""The lazily built MCP endpoint never leaves a request waiting: outside a running app it answers
503 at once, and a refused key is answered before the SDK is loaded."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from application.accounts.authenticate import LOCAL_OWNER, Caller
from application.errors import Unauthorized
from interfaces.mcp.endpoint import McpEndpoint


class Keys:
    def __init__(self, valid: bool) -> None:
        self.valid = valid

    def authenticate(self) -> Any:
        async def authenticate(_: str | None) -> Caller:
            if not self.valid:
                raise Unauthorized("An API key is required.")
            return Caller(LOCAL_OWNER)

        return authenticate


async def call(endpoint: McpEndpoint) -> tuple[int, dict[str, Any]]:
    scope = {"type": "http", "method": "POST", "path": "/mcp/", "headers": [], "query_string": b"",
             "scheme": "http", "server": ("127.0.0.1", 8000), "root_path": ""}
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await asyncio.wait_for(endpoint(scope, receive, send), timeout=5)
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return sent[0]["status"], json.loads(body)


async def test_outside_a_running_app_a_request_is_answered_503_at_once() -> None:
    status, body = await call(McpEndpoint(Keys(valid=True), loopback_only=True))  # type: ignore[arg-type]
    assert status == 503
    assert set(body) == {"code", "message"}


async def test_a_refused_key_is_answered_without_loading_the_sdk() -> None:
    loaded_before = "mcp.server.mcpserver" in sys.modules
    status, body = await call(McpEndpoint(Keys(valid=False), loopback_only=True))  # type: ignore[arg-type]
    assert (status, body["code"]) == (401, "unauthorized")
    assert ("mcp.server.mcpserver" in sys.modules) == loaded_before
