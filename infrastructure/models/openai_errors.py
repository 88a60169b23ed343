"""Failures of OpenAI-protocol calls → `ModelError` with one plain line, and what to retry.

The line says what failed (status and the server's own message, a timeout, an unreachable
server, garbage on the wire); it never holds a stack trace or the API key.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Literal

import aiohttp
import openai

from application.errors import ModelError

MAX_DETAIL = 300


def is_transient(error: BaseException) -> bool:
    """Rate limits, server errors and connection failures (timeouts included) may pass."""
    return isinstance(error, openai.RateLimitError | openai.InternalServerError | openai.APIConnectionError)


def retry_after(error: BaseException | None) -> float | None:
    """Seconds the server asked us to wait (`retry-after-ms` or `retry-after` in seconds)."""
    if not isinstance(error, openai.APIStatusError):
        return None
    headers = error.response.headers
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        try:
            return float(headers[name]) * scale
        except (KeyError, ValueError):
            continue  # absent, or an HTTP date: fall back to our own backoff
    return None


@dataclass(frozen=True, slots=True)
class ModelErrors:
    model: str
    base_url: str | None
    timeout: float
    secret: str | None = field(default=None, repr=False)

    def translate(self, error: BaseException) -> ModelError:
        return ModelError(self._scrub(f"Model {self.model!r} failed: {self._what(error)}"))

    def _what(self, error: BaseException) -> str:
        if isinstance(error, openai.APIConnectionError):
            timed_out = isinstance(error, openai.APITimeoutError)
            if (_transport_cause(error) or ("timeout" if timed_out else "connection")) == "timeout":
                return f"no answer within {self.timeout:g} s."
            return f"could not connect to {self.base_url or 'the OpenAI API'}."
        if isinstance(error, openai.APIStatusError):
            return f"the server answered HTTP {error.status_code}: {_server_message(error)}"
        if isinstance(error, json.JSONDecodeError):
            return "the server sent a chunk that is not JSON."
        return f"{type(error).__name__}: {_first_line(str(error))}"

    def _scrub(self, text: str) -> str:
        return text.replace(self.secret, "***") if self.secret else text


def _transport_cause(error: BaseException) -> Literal["timeout", "connection"] | None:
    """What a transport failure was, read from the exception chain. The class alone misleads:
    the SDK's aiohttp transport reports every aiohttp connection error (refused, TLS, a dropped
    stream) as httpx's ConnectTimeout, which the SDK turns into an APITimeoutError."""
    seen: set[int] = set()
    cause = error.__cause__ or error.__context__
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, TimeoutError):
            return "timeout"
        if isinstance(cause, OSError | aiohttp.ClientConnectionError):
            return "connection"
        cause = cause.__cause__ or cause.__context__
    return None


def _server_message(error: openai.APIStatusError) -> str:
    body = error.body
    message = body.get("message") if isinstance(body, dict) else None
    return _first_line(str(message or error.message))


def _first_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else "no details"
    return line[:MAX_DETAIL]
