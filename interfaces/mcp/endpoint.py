"""memagent's MCP endpoint at `/mcp/`, built with its first request.

The `mcp` SDK costs a second of start-up to every process that imports it, and most servers never
get an MCP request. So the app mounts this endpoint, which imports the SDK and builds the server
(mcp_server.py) when the first authenticated request comes, and runs the SDK's session manager in
the app's lifespan from then on: entered and left by one task, as the SDK's task group requires.

A request the HTTP API would refuse (no key when keys are required, a wrong key, an agent key) gets
the API's 401 or 403 here, before the SDK sees it, with the RFC 9728 metadata its client needs.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING

from starlette.requests import Request

from application.errors import ApplicationError, StoreUnavailable
from interfaces.http.errors import policy_response
from interfaces.http.key_gate import header
from interfaces.http.mcp_metadata import resource_metadata_url

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from starlette.types import ASGIApp, Receive, Scope, Send

    from interfaces.wiring.container import Container

log = logging.getLogger(__name__)

UNAVAILABLE = "The MCP endpoint could not start; see the server's log."


class McpEndpoint:
    def __init__(self, container: Container, *, loopback_only: bool) -> None:
        self._container = container
        self._loopback_only = loopback_only
        self._wanted = asyncio.Event()
        self._ready = asyncio.Event()
        self._app: ASGIApp | None = None
        self._running = False  # the app's lifespan runs the endpoint: without it nothing would answer

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """For the app's lifespan: the session manager runs, once asked for, until the app stops."""
        serving = asyncio.create_task(self._serve_when_wanted(), name="mcp-endpoint")
        self._running = True
        try:
            yield
        finally:
            self._running = False
            serving.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await serving

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # Streamable HTTP only: nothing else is authenticated here
            return
        try:
            (await self._container.authenticate()(header(scope, b"authorization"))).account("use the MCP server")
        except ApplicationError as failure:
            await _refusal(failure, scope)(scope, receive, send)
            return
        if self._running and not self._ready.is_set():
            self._wanted.set()
            await self._ready.wait()
        if self._app is None or not self._running:
            await policy_response(StoreUnavailable(UNAVAILABLE))(scope, receive, send)
            return
        await self._app(scope, receive, send)

    async def _serve_when_wanted(self) -> None:
        try:
            await self._wanted.wait()
            from interfaces.mcp.server import bearer_owner, build_mcp_server, mcp_http_app

            server = build_mcp_server(self._container, bearer_owner(self._container))
            app = mcp_http_app(server, loopback_only=self._loopback_only)
            async with server.session_manager.run():
                self._app = app
                self._ready.set()
                await asyncio.Event().wait()  # until the app's lifespan ends and cancels this task
        except Exception:  # its requests are answered 503; the rest of the app goes on
            log.exception("the MCP endpoint could not start")
        finally:
            self._app = None
            self._ready.set()  # requests waiting for it are answered: with 503 once it has stopped


def _refusal(failure: ApplicationError, scope: Scope) -> ASGIApp:
    refusal = policy_response(failure)  # the HTTP API's own answer
    if refusal.status_code == 401:  # RFC 9728: where an MCP client learns how to authenticate
        refusal.headers["WWW-Authenticate"] = f'Bearer resource_metadata="{resource_metadata_url(Request(scope))}"'
    return refusal
