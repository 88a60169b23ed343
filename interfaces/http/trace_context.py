"""W3C trace context from the incoming request: with a `traceparent` header, the request runs
inside that context, so the turn it starts is a span of the caller's trace (LaunchTurn hands the
context on to the turn's background task). A pure ASGI middleware: no route needs to know."""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.ports.tracing import TraceParent
from interfaces.http.key_gate import header

if TYPE_CHECKING:
    from collections.abc import Callable

    from starlette.types import ASGIApp, Receive, Scope, Send

    from application.ports.tracing import Tracer


class TraceContext:
    def __init__(self, app: ASGIApp, tracer: Callable[[], Tracer]) -> None:
        self._app = app
        self._tracer = tracer

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        traceparent = header(scope, b"traceparent") if scope["type"] == "http" else None
        if not traceparent:
            await self._app(scope, receive, send)
            return
        parent = TraceParent(traceparent, header(scope, b"tracestate") or "")
        with self._tracer().resumed(parent):
            await self._app(scope, receive, send)
