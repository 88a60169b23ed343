"""Bounds the bytes of every request body, counted as they arrive: 413 `payload_too_large`.

A pure ASGI middleware, so that nothing reads the body before it: a request whose Content-Length
already passes the limit is refused before its body is read; any other (chunked, or one that sends
more than it declared) is refused once the bytes received pass the limit, by an exception raised
from `receive` where the app reads the body (the error policy answers it). Either answer closes
the connection, so the rest is never read. Upload routes get their own, larger bound.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from starlette.exceptions import HTTPException

from interfaces.http.errors import error_response
from interfaces.http.key_gate import header

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

PAYLOAD_TOO_LARGE = "payload_too_large"
CLOSE = {"Connection": "close"}
MAX_CONTENT_LENGTH_DIGITS = 20


class BodyTooLarge(HTTPException):
    """Raised from `receive`: an HTTPException, since FastAPI turns any other error raised while it
    reads a body into 400 "There was an error parsing the body"."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"The request body is larger than the limit of {limit} bytes.", headers=CLOSE)


@dataclass(frozen=True, slots=True)
class BodyLimits:
    default: int  # MEMAGENT_SERVER__MAX_BODY_BYTES
    upload: int  # document uploads: from MEMAGENT_KNOWLEDGE__MAX_DOCUMENT_BYTES
    upload_path: re.Pattern[str] = re.compile(r"^/api/datasets/[^/]+/documents/?$")
    # An OpenAI client resends the whole conversation with each turn: its body grows with the chat.
    completions: int = 8 * 1024 * 1024  # MEMAGENT_SERVER__MAX_COMPLETION_BODY_BYTES
    completions_paths: tuple[str, ...] = ("/v1/chat/completions", "/v1/responses")

    def of(self, scope: Scope) -> int:
        if scope.get("method") != "POST":
            return self.default
        if self.upload_path.match(scope["path"]) is not None:
            return self.upload
        return self.completions if scope["path"] in self.completions_paths else self.default


def declared_length(scope: Scope) -> int | None:
    raw = header(scope, b"content-length")
    if raw is None or not raw.strip().isdigit() or len(raw.strip()) > MAX_CONTENT_LENGTH_DIGITS:
        return None  # the server (uvicorn) refuses a malformed one before the app runs
    return int(raw)


class BodyLimit:
    def __init__(self, app: ASGIApp, limits: BodyLimits) -> None:
        self._app = app
        self._limits = limits

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        limit = self._limits.of(scope)
        declared = declared_length(scope)
        if declared is not None and declared > limit:
            message = f"The request body is {declared} bytes; the limit is {limit}."
            await error_response(413, PAYLOAD_TOO_LARGE, message, CLOSE, path=scope["path"])(scope, receive, send)
            return
        await self._app(scope, _counting(receive, limit), send)


def _counting(receive: Receive, limit: int) -> Receive:
    received = 0

    async def counted() -> Message:
        nonlocal received
        message = await receive()
        if message["type"] == "http.request":
            received += len(message.get("body", b""))
            if received > limit:
                raise BodyTooLarge(limit)
        return message

    return counted
