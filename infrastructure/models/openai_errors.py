"""Failures of OpenAI-protocol calls → `ModelError` with one plain sentence, and what to retry.

The sentence is what clients see (and what a failed turn stores): it says which kind of failure it
was (refused or unreachable, a dropped connection, a timeout, a rate limit, a server error, a
refused request, garbage on the wire) and never names a URL, host, port, exception class, the
server's own words or the API key. The details go to the log line written where the failure is
translated: the model, its base URL, the exception chain and the server's message.
"""

from __future__ import annotations

import errno
import json
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

import aiohttp
import httpx2
import openai

from application.errors import ModelError, ModelNotReached

if TYPE_CHECKING:
    from collections.abc import Mapping

logger = logging.getLogger(__name__)

MAX_DETAIL = 300

Transport = Literal["timeout", "reset", "connect"]

_TRANSPORT_SENTENCES: dict[Transport, str] = {
    "timeout": "The {server} did not answer in time.",
    "reset": "The {server} closed the connection before the answer was complete.",
    "connect": "The {server} could not be reached.",
}
_STATUS_SENTENCES = {
    401: "The {server} refused the API key (HTTP 401).",
    403: "The {server} denied access to the model (HTTP 403).",
    404: "The {server} does not offer the configured model or endpoint (HTTP 404).",
    429: "The {server} is rate limiting requests (HTTP 429); try again shortly.",
}
_SERVER_FAILED = "The {server} failed to answer (HTTP {status}); try again shortly."
_REQUEST_REFUSED = "The {server} rejected the request (HTTP {status})."
_NOT_JSON = "The {server} sent an answer that is not JSON."
_UNEXPECTED = "The call to the {server} failed unexpectedly."


# A connection the server (or something on the way) dropped once it was open.
_DROPPED = (
    ConnectionResetError, BrokenPipeError, ConnectionAbortedError,
    aiohttp.ServerDisconnectedError, aiohttp.ClientPayloadError,
)
_DROPPED_ERRNOS = frozenset({errno.ECONNRESET, errno.EPIPE, errno.ECONNABORTED})


class StatusError(Exception):
    """An answer with an HTTP error status: the status, the headers (names in lower case) and the
    server's own message, which goes to the log only."""

    def __init__(self, status: int, headers: Mapping[str, str], message: str) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status
        self.headers = {name.lower(): value for name, value in headers.items()}
        self.message = message

    @classmethod
    def of(cls, status: int, headers: Mapping[str, str], body: bytes) -> StatusError:
        """From the raw body: OpenAI's `{"error": {"message": …}}`, `{"error": "…"}` (Ollama's), or
        any other body as it reads."""
        text = body.decode(errors="replace")
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        said = parsed.get("error", parsed) if isinstance(parsed, dict) else None
        if isinstance(said, dict):
            said = said.get("message")
        return cls(status, headers, str(said or text))


def is_transient(error: BaseException) -> bool:
    """Rate limits, server errors and transport failures (timeouts included) may pass."""
    if isinstance(error, StatusError):
        return error.status == 429 or error.status >= 500
    return isinstance(error, Exception) and transport_failure(error) is not None


def retry_after(error: BaseException | None) -> float | None:
    """Seconds the server asked us to wait (`retry-after-ms` or `retry-after` in seconds)."""
    if not isinstance(error, StatusError):
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        try:
            return float(error.headers[name]) * scale
        except (KeyError, ValueError):
            continue  # absent, or an HTTP date: fall back to our own backoff
    return None


@dataclass(frozen=True, slots=True)
class ModelErrors:
    model: str
    base_url: str | None
    timeout: float
    secret: str | None = field(default=None, repr=False)
    server: str = "model server"  # how clients are told which server failed

    def translate(self, error: BaseException, *, before_answer: bool = False) -> ModelError:
        """The plain `ModelError` for `error`; the details are logged here, once. `before_answer`:
        nothing of the answer had come yet, so a transport failure or an HTTP error means no model
        ran (`ModelNotReached`, billed nothing); garbage on the wire still came from a server."""
        sentence = self.sentence(error)
        logger.warning(
            "Model %r at %s failed (timeout %g s): %s → %r",
            self.model, self.base_url or "the OpenAI API", self.timeout, self._scrub(details(error)), sentence,
        )
        unanswered = _status(error) is not None or transport_failure(error) is not None
        return ModelNotReached(sentence) if before_answer and unanswered else ModelError(sentence)

    def sentence(self, error: BaseException) -> str:
        """What a client is told: one of a few fixed sentences, by kind of failure."""
        if (status := _status(error)) is not None:
            template = _STATUS_SENTENCES.get(status) or (_SERVER_FAILED if status >= 500 else _REQUEST_REFUSED)
            return template.format(server=self.server, status=status)
        if isinstance(error, json.JSONDecodeError):
            return _NOT_JSON.format(server=self.server)
        kind = transport_failure(error)
        return (_TRANSPORT_SENTENCES[kind] if kind else _UNEXPECTED).format(server=self.server)

    def _scrub(self, text: str) -> str:
        return text.replace(self.secret, "***") if self.secret else text


def _status(error: BaseException) -> int | None:
    """The HTTP error status the server answered with (ours, or the openai SDK's), if any."""
    if isinstance(error, StatusError):
        return error.status
    return error.status_code if isinstance(error, openai.APIStatusError) else None


def transport_failure(error: BaseException) -> Transport | None:
    """What a transport failure was, read from the exception chain first (aiohttp's and the OS's
    errors). A wrapper's class alone misleads: the SDKs (the embedder's, AgentScope's) wrap the cause
    in classes of their own, and the openai SDK's aiohttp transport even reported a refused
    connection or a dropped stream as httpx's ConnectTimeout, and that as an APITimeoutError."""
    for cause in _chain(error):
        if kind := _os_level(cause):
            return kind
    return _by_class(error)


def _os_level(cause: BaseException) -> Transport | None:
    if isinstance(cause, TimeoutError):  # aiohttp's socket timeouts included
        return "timeout"
    if isinstance(cause, _DROPPED):
        return "reset"
    if isinstance(cause, aiohttp.ClientConnectorError):  # connecting failed: refused, DNS, TLS
        return "connect"
    if isinstance(cause, OSError) and cause.errno in _DROPPED_ERRNOS:  # aiohttp's ClientOSError
        return "reset"
    if isinstance(cause, OSError | aiohttp.ClientConnectionError):
        return "connect"
    return None


def _by_class(error: BaseException) -> Transport | None:
    if isinstance(error, openai.APITimeoutError | httpx2.TimeoutException | TimeoutError):
        return "timeout"
    if isinstance(error, httpx2.RemoteProtocolError | httpx2.ReadError | httpx2.WriteError):
        return "reset"
    if isinstance(error, openai.APIConnectionError | httpx2.TransportError | aiohttp.ClientError | OSError):
        return "connect"
    return None


def _chain(error: BaseException) -> list[BaseException]:
    """`error` and its causes, outermost first (at most eight, no cycles)."""
    chain: list[BaseException] = []
    seen: BaseException | None = error
    while seen is not None and seen not in chain and len(chain) < 8:
        chain.append(seen)
        seen = seen.__cause__ or seen.__context__
    return chain


def details(error: BaseException) -> str:
    """For the log: each exception of the chain as `Class: first line`, and the server's message."""
    parts = [f"{type(e).__name__}: {_first_line(str(e))}" for e in _chain(error)]
    if isinstance(error, StatusError | openai.APIStatusError):
        parts.insert(0, f"HTTP {_status(error)}: {_server_message(error)}")
    return " <- ".join(parts)


def _server_message(error: StatusError | openai.APIStatusError) -> str:
    if isinstance(error, StatusError):
        return _first_line(error.message)
    body = error.body
    message = body.get("message") if isinstance(body, dict) else None
    return _first_line(str(message or error.message))


def _first_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else "no details"
    return line[:MAX_DETAIL]
