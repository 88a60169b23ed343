"""Closes the connection of any request answered before its body was read: the rest is never read.

An answer that needs no body (401 from the MCP endpoint, 404 from the router, 405, ...) is sent at
once, but on a kept-alive connection the server then reads, and discards, all the rest of the body
before it can read the next request: ten 200 MB bodies to a 404 kept it reading for 11 s. With
`Connection: close` on such an answer, the server closes the connection once it is sent instead.
A pure ASGI middleware, since it must see both what the app reads and what it answers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from interfaces.http.key_gate import header

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

CLOSE_HEADER = (b"connection", b"close")


def has_body(scope: Scope) -> bool:
    """Whether the request sends a body: chunked, or a Content-Length other than 0."""
    length = header(scope, b"content-length")
    return header(scope, b"transfer-encoding") is not None or (length is not None and length.strip() != "0")


class UnreadBodyCloses:
    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not has_body(scope):
            await self._app(scope, receive, send)
            return
        unread = True

        async def reading() -> Message:
            nonlocal unread
            message = await receive()
            if message["type"] == "http.request" and not message.get("more_body", False):
                unread = False
            return message

        async def answering(message: Message) -> None:
            if message["type"] == "http.response.start" and unread:
                message = {**message, "headers": _closing(message.get("headers", []))}
            await send(message)

        await self._app(scope, reading, answering)


def _closing(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """`headers` with `Connection: close` in place of any other Connection header."""
    return [*(item for item in headers if item[0].lower() != b"connection"), CLOSE_HEADER]
