"""Counts the event streams open now (`memagent_active_streams`): every answer sent as
`text/event-stream` (a turn's SSE, a task's events, a /v1 stream, MCP's), from its first byte until
the response ends, however it ends (the client gone, the server stopping).

A pure ASGI middleware: it sees each answer's headers and its end, and no route needs to know.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from starlette.types import ASGIApp, Message, Receive, Scope, Send

    from application.ports.load_metrics import LoadMetrics

EVENT_STREAM = b"text/event-stream"


class StreamGauge:
    def __init__(self, app: ASGIApp, metrics: Callable[[], LoadMetrics]) -> None:
        self._app = app
        self._metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        metrics = self._metrics()
        opened = False

        async def watched(message: Message) -> None:
            nonlocal opened
            if message["type"] == "http.response.start" and _is_stream(message):
                opened = True
                metrics.stream_opened()
            await send(message)

        try:
            await self._app(scope, receive, watched)
        finally:
            if opened:
                metrics.stream_closed()


def _is_stream(start: Message) -> bool:
    return any(k.lower() == b"content-type" and v.startswith(EVENT_STREAM) for k, v in start.get("headers", []))
