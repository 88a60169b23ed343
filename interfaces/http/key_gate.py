"""Refuses a request to `/api/`, `/v1/` or `/a2a/` without a valid key before any of its body is read.

FastAPI reads and parses a route's body before it solves the route's dependencies, so the key is
checked here, in a pure ASGI middleware, from the headers alone: a client without a key cannot
make the server read (or buffer) a single byte of what it sends. The owner found is kept in the
request's state for `interfaces.http.owner.current_caller`. The answer to a refused request closes
the connection, so that the rest of its body is never read either.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.errors import ApplicationError
from interfaces.http.errors import policy_response

if TYPE_CHECKING:
    from collections.abc import Callable

    from starlette.types import ASGIApp, Receive, Scope, Send

    from application.accounts.authenticate import Authenticate

CALLER_STATE = "caller"  # the key of the authenticated caller in the ASGI scope's `state`
GUARDED_PREFIXES = ("/api/", "/v1/", "/a2a/")


def header(scope: Scope, name: bytes) -> str | None:
    """The first value of header `name` (lower case), as sent."""
    return next((v.decode("latin-1") for k, v in scope.get("headers", []) if k.lower() == name), None)


class KeyGate:
    """Authenticates every HTTP request under `/api/`, `/v1/` and `/a2a/` from its `Authorization` header."""

    def __init__(self, app: ASGIApp, authenticate: Callable[[], Authenticate]) -> None:
        self._app = app
        self._authenticate = authenticate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith(GUARDED_PREFIXES):
            await self._app(scope, receive, send)
            return
        try:
            caller = await self._authenticate()(header(scope, b"authorization"))
        except ApplicationError as failure:
            response = policy_response(failure, scope["path"])
            response.headers["Connection"] = "close"
            await response(scope, receive, send)
            return
        scope.setdefault("state", {})[CALLER_STATE] = caller
        await self._app(scope, receive, send)
