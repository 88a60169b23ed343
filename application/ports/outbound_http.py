"""HTTP requests a workflow sends to other servers: never to loopback, link-local or private
addresses unless the operator allows them, and with bounded bodies and time."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol


@dataclass(frozen=True, slots=True)
class OutboundRequest:
    method: str
    url: str
    headers: tuple[tuple[str, str], ...] = ()
    body: str | None = None
    timeout: float = 10.0


@dataclass(frozen=True, slots=True)
class OutboundResponse:
    status: int
    body: str
    headers: tuple[tuple[str, str], ...] = field(default=())


class OutboundHttp(Protocol):
    async def send(self, request: OutboundRequest) -> OutboundResponse:
        """The server's answer, whatever its status. Raises `NodeFailed`: an address refused (named
        as refused, never resolved for the caller), a timeout, a connection failure, a body over
        the size limit."""
        ...
