"""Outbound HTTP of workflow `http_request` nodes, on httpcore (httpx's own transport layer).

Against SSRF the check sits where the socket is opened: a network backend resolves the host, refuses
it when any of its addresses is not public (loopback, private, link-local, shared, reserved,
multicast, unspecified, and those inside IPv4-mapped, 6to4 or Teredo IPv6 forms), and connects to
the address it checked. There is no window between the check and the connection (a DNS answer that
changes in between, "DNS rebinding", gains nothing), TLS still verifies the name in the URL, and
odd spellings of an address (`http://2130706433/`, `http://0x7f.1/`) are checked as what they
resolve to. Redirects are never followed: a 3xx comes back as the node's answer.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from typing import TYPE_CHECKING, Any

import httpcore
import httpx

from application.errors import NodeFailed
from application.ports.outbound_http import OutboundHttp, OutboundRequest, OutboundResponse

if TYPE_CHECKING:
    from collections.abc import Iterable

    from httpcore import AsyncNetworkStream

METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$")
# Headers that describe the connection or the body framing: this adapter sets them.
_OWN_HEADERS = frozenset({"host", "content-length", "transfer-encoding", "connection", "accept-encoding",
                          "upgrade", "te", "trailer", "keep-alive", "proxy-connection"})
IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class _Refused(Exception):
    """The host resolves to an address outside the allowed networks."""


def is_public(address: IpAddress) -> bool:
    """Whether `address` is on the public internet, looking inside IPv6 forms that carry IPv4."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = address.ipv4_mapped or address.sixtofour or (address.teredo[1] if address.teredo else None)
        if embedded is not None and not is_public(embedded):
            return False
    return address.is_global and not address.is_multicast


class _CheckedBackend(httpcore.AsyncNetworkBackend):
    """Connects only to addresses it has checked, resolving the host itself."""

    def __init__(self, allow_private_networks: bool) -> None:
        self._inner = httpcore.AnyIOBackend()
        self._allow_private = allow_private_networks

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None,  # noqa: ASYNC109 - httpcore's
                          local_address: str | None = None, socket_options: Iterable[Any] | None = None,
                          ) -> AsyncNetworkStream:
        found = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
        addresses = [ipaddress.ip_address(str(entry[4][0]).split("%")[0]) for entry in found]
        if not addresses or not (self._allow_private or all(is_public(a) for a in addresses)):
            raise _Refused(host)
        return await self._inner.connect_tcp(str(addresses[0]), port, timeout, local_address, socket_options)

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class GuardedHttp(OutboundHttp):
    def __init__(self, allow_private_networks: bool = False, max_body_bytes: int = 1_000_000,
                 max_timeout: float = 30.0, max_connections: int = 50) -> None:
        self._max_body = max_body_bytes
        self._max_timeout = max_timeout
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=httpx.create_ssl_context(), max_connections=max_connections,
            network_backend=_CheckedBackend(allow_private_networks),
        )

    async def send(self, request: OutboundRequest) -> OutboundResponse:
        url = _checked_url(request.url)
        method = request.method.upper()
        if method not in METHODS:
            raise NodeFailed(f"The method {request.method!r} is not one of {', '.join(sorted(METHODS))}.")
        headers = _checked_headers(request.headers)
        timeout = min(max(request.timeout, 0.001), self._max_timeout)
        try:
            async with asyncio.timeout(timeout):
                return await self._exchange(method, url, headers, request.body, per_phase=timeout)
        except _Refused:
            raise NodeFailed(f"The address of {url.host!r} is not allowed: it is not on the public internet "
                             "(loopback, private, link-local or reserved).") from None
        except (TimeoutError, httpcore.TimeoutException):
            raise NodeFailed(f"The request to {url.host!r} took more than {timeout:g} s.") from None
        except OSError as error:  # a name that does not resolve, a refused connection
            raise NodeFailed(f"The request to {url.host!r} failed: {error.strerror or error}.") from None
        except (httpcore.NetworkError, httpcore.ProtocolError) as error:
            raise NodeFailed(f"The request to {url.host!r} failed: {error or 'the connection broke'}.") from None

    async def aclose(self) -> None:
        await self._pool.aclose()

    async def _exchange(self, method: str, url: httpx.URL, headers: list[tuple[str, str]], body: str | None,
                        per_phase: float) -> OutboundResponse:
        content = body.encode() if body is not None else b""
        extensions = {"timeout": dict.fromkeys(("connect", "read", "write", "pool"), per_phase)}
        async with self._pool.stream(method, str(url), headers=headers, content=content,
                                     extensions=extensions) as response:
            received = bytearray()
            async for chunk in response.aiter_stream():
                received += chunk
                if len(received) > self._max_body:
                    raise NodeFailed(f"The response from {url.host!r} is larger than {self._max_body:,} bytes.")
            answer_headers = tuple((k.decode("latin-1"), v.decode("latin-1")) for k, v in response.headers)
        return OutboundResponse(status=response.status, body=_text(bytes(received), answer_headers),
                                headers=answer_headers)


def _checked_url(raw: str) -> httpx.URL:
    try:
        url = httpx.URL(raw)
    except (httpx.InvalidURL, TypeError):
        raise NodeFailed(f"{raw!r} is not a URL.") from None
    if url.scheme not in {"http", "https"} or not url.host:
        raise NodeFailed(f"{raw!r} is not an http or https URL.")
    if url.userinfo:
        raise NodeFailed("A URL with a user name or password is not allowed; send an Authorization header.")
    return url


def _checked_headers(headers: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    checked = [("Accept-Encoding", "identity")]  # bodies are read as sent: no decompression bombs
    for name, value in headers:
        if not _HEADER_NAME.match(name) or any(c in value for c in "\r\n\0"):
            raise NodeFailed(f"The header {name!r} is not a valid HTTP header.")
        if name.lower() in _OWN_HEADERS:
            raise NodeFailed(f"The header {name!r} is set by the request itself and cannot be given.")
        checked.append((name, value))
    return checked


def _text(body: bytes, headers: Iterable[tuple[str, str]]) -> str:
    content_type = next((v for k, v in headers if k.lower() == "content-type"), "")
    charset = re.search(r"charset=([\w-]+)", content_type)
    try:
        return body.decode(charset.group(1) if charset else "utf-8", errors="replace")
    except LookupError:  # a charset Python does not know
        return body.decode("utf-8", errors="replace")
