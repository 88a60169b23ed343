"""The HTTP side of `memagent chat`: memagent's API over httpx, its SSE frames, and its errors as one line.

The key travels only in the `Authorization: Bearer` header; it is never part of a URL, an error
or anything printed.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit

import httpx

if TYPE_CHECKING:
    from collections.abc import Iterator

REQUEST_TIMEOUT = httpx.Timeout(30.0)
# A silent turn sends a `: ping` every MEMAGENT_EVENTS__KEEPALIVE seconds (15), so a read this long
# without a byte means the server or the network is gone.
STREAM_TIMEOUT = httpx.Timeout(30.0, read=120.0)


class ApiError(Exception):
    """The server refused a request: its `{code, message}`, as one line."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message

    def line(self) -> str:
        return f"{self.message} ({self.code})"


class Unreachable(Exception):
    """No answer from the server at all: refused, timed out, or not HTTP."""


@dataclass
class Frame:
    """One SSE frame: its event, its JSON data and its SSE id (None for `done` and comments)."""

    event: str
    data: dict[str, Any] = field(default_factory=dict)
    id: int | None = None


def url_problem(url: str) -> str | None:
    """Why `url` cannot be memagent's base URL, or None."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"the server URL must look like http://127.0.0.1:8000, got {url!r}"
    if parts.username or parts.password:
        return "the server URL must not hold credentials: pass the key in MEMAGENT_KEY (or --key)"
    return None


def path_part(value: str) -> str:
    """An id or end user as one URL path segment."""
    return quote(value, safe="")


class MemagentClient:
    def __init__(self, url: str, key: str | None) -> None:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self.url = url.rstrip("/")
        self._http = httpx.Client(base_url=self.url, headers=headers, timeout=REQUEST_TIMEOUT)

    def close(self) -> None:
        self._http.close()

    def get(self, path: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return self._call("GET", path, params=params)

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        return self._call("POST", path, json=body)

    def _call(self, method: str, path: str, **options: Any) -> dict[str, Any]:
        try:
            response = self._http.request(method, path, **options)
        except httpx.TransportError as failure:
            raise Unreachable(self._why(failure)) from None
        _raise_for(response)
        data = _json(response)
        return data if isinstance(data, dict) else {"data": data}

    @contextmanager
    def stream(self, method: str, path: str, **options: Any) -> Iterator[Iterator[Frame]]:
        """The frames of an SSE answer as they arrive; an error answer raises ApiError."""
        try:
            with self._http.stream(method, path, timeout=STREAM_TIMEOUT, **options) as response:
                if response.status_code >= 400:
                    response.read()
                    _raise_for(response)
                yield parse_frames(response.iter_lines())
        except httpx.TransportError as failure:
            raise Unreachable(self._why(failure)) from None

    def _why(self, failure: httpx.TransportError) -> str:
        if isinstance(failure, httpx.TimeoutException):
            return f"{self.url} did not answer in time"
        reason = str(failure).strip() or type(failure).__name__
        return f"cannot reach memagent at {self.url}: {reason}"


def _json(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None


def _raise_for(response: httpx.Response) -> None:
    if response.status_code < 400:
        return
    body = _json(response)
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        raise ApiError(response.status_code, str(body.get("code", "error")), body["message"])
    raise ApiError(response.status_code, "http_error", f"the server answered HTTP {response.status_code}")


def parse_frames(lines: Iterator[str]) -> Iterator[Frame]:
    """SSE (https://html.spec.whatwg.org/multipage/server-sent-events.html) as memagent writes it."""
    event, frame_id = "message", None
    data: list[str] = []
    for line in lines:
        if line == "":
            if data:
                yield Frame(event, _data(data), frame_id)
            event, data, frame_id = "message", [], None
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "event":
            event = value
        elif name == "data":
            data.append(value)
        elif name == "id" and value.isdigit():
            frame_id = int(value)
    if data:
        yield Frame(event, _data(data), frame_id)


def _data(lines: list[str]) -> dict[str, Any]:
    try:
        parsed = json.loads("\n".join(lines))
    except ValueError:
        return {"text": "\n".join(lines)}
    return parsed if isinstance(parsed, dict) else {"value": parsed}
