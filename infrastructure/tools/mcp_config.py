"""An MCP server's configuration (`MEMAGENT_MCP__SERVERS`) and the states of its connection.

Kept apart from the SDK: a process that has no MCP server configured never imports `mcp`
(mcp_transport.py and mcp_session.py do, and are imported only when a server is).
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping


class Transport(enum.StrEnum):
    STDIO = "stdio"
    HTTP = "http"


@dataclass(frozen=True, slots=True)
class McpServerConfig:
    """One MCP server. stdio: `command`, `args`, `env`, `cwd`; http: `url`, `headers`.

    `timeout`: seconds a `tools/call` may take; `startup_timeout`: seconds to start the server
    and finish `initialize` and `tools/list`; `sequential`: its tools' calls run one at a time.
    """

    name: str
    transport: Transport
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict, repr=False)  # may hold secrets
    cwd: str | None = None
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)  # may hold secrets
    timeout: float = 30.0
    startup_timeout: float = 10.0
    sequential: bool = False  # its tools' calls never overlap (they change something)

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", self.name):
            raise ValueError(f"MCP server name {self.name!r} must be 1-64 letters, digits, '_' or '-'")
        if self.transport is Transport.STDIO and not self.command:
            raise ValueError(f"MCP server {self.name!r}: a stdio server needs a command")
        if self.transport is Transport.HTTP and not self.url.startswith(("http://", "https://")):
            raise ValueError(f"MCP server {self.name!r}: an http server needs an http(s) url")

    @property
    def where(self) -> str:
        """What it runs or where it is, for messages (no env, no headers: they may hold secrets)."""
        if self.transport is Transport.STDIO:
            return " ".join([self.command, *self.args])[:200]
        return self.url.split("?")[0][:200]


def server_configs(mcp: Mapping[str, Any]) -> list[McpServerConfig]:
    """From the plain `mcp` settings the container holds."""
    startup = float(mcp.get("startup_timeout", 10.0))
    configs = []
    for server in mcp.get("servers") or []:
        configs.append(
            McpServerConfig(
                name=str(server["name"]),
                transport=Transport(server.get("transport", "stdio")),
                command=str(server.get("command") or ""),
                args=tuple(str(a) for a in server.get("args") or ()),
                env={str(k): str(v) for k, v in (server.get("env") or {}).items()},
                cwd=server.get("cwd"),
                url=str(server.get("url") or ""),
                headers={str(k): str(v) for k, v in (server.get("headers") or {}).items()},
                timeout=float(server.get("timeout") or 30.0),
                startup_timeout=float(server.get("startup_timeout") or startup),
                sequential=bool(server.get("sequential", False)),
            )
        )
    names = [c.name for c in configs]
    if len(set(names)) != len(names):
        raise ValueError(f"MCP server names must be unique: {names}")
    return configs


class ServerState(enum.StrEnum):
    IDLE = "idle"
    STARTING = "starting"
    READY = "ready"
    FAILED = "failed"
    CLOSED = "closed"
