from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class ToolServerStatus:
    """How one external tool server (an MCP server) is doing, for health checks.

    `state`: `starting`, `ready`, `failed` (could not start or died; retried later) or `closed`.
    `error`: one plain line saying why it is not ready; empty when it is.
    """

    name: str
    transport: str
    state: str
    tools: tuple[str, ...] = ()
    error: str = ""


class ToolServers(Protocol):
    """The external tool servers the application was configured with."""

    def statuses(self) -> list[ToolServerStatus]: ...
