"""One ToolBox over the built-in registry and every MCP server.

Naming: a built-in tool keeps its name. An MCP tool is offered under its own name when no
other tool (built-in, or of another MCP server) has it, else as `server.tool`. The qualified
`server.tool` always works too, and `server.*` in an agent's tool names enables every tool
of that server. Names are worked out on each call from the tool lists the servers last sent,
so a server that comes up late adds its tools to the next turn.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from application.errors import ToolCallFailed
from application.ports.tools import NamedTool, ServerTools, ToolBox, ToolCatalog, ToolCatalogue
from domain.tools.calls import ToolCall, ToolFailure, ToolSpec
from infrastructure.tools.mcp_client import McpServers
from infrastructure.tools.mcp_config import ServerState

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from infrastructure.tools.mcp_session import McpServer
    from infrastructure.tools.registry import ToolRegistry

_NOT_IN_A_NAME = re.compile(r"[^A-Za-z0-9_\-]")


@dataclass(frozen=True, slots=True)
class _McpTool:
    server: McpServer
    tool: str  # its name on the server
    spec: ToolSpec


class CompositeToolBox(ToolBox, ToolCatalog):
    def __init__(self, builtin: ToolRegistry, servers: McpServers | None = None) -> None:
        self._builtin = builtin
        self._servers = servers or McpServers([])

    @property
    def servers(self) -> McpServers:
        return self._servers

    def specs(self, names: Sequence[str]) -> list[ToolSpec]:
        catalog, aliases = self._catalog()
        chosen: dict[str, ToolSpec] = {}
        for name in names:
            if name.endswith(".*") and self._servers.get(name[:-2]) is not None:
                server = name[:-2]
                for exposed, listed in catalog.items():
                    if isinstance(listed, _McpTool) and listed.server.name == server:
                        chosen.setdefault(exposed, listed.spec)
                continue
            exposed = aliases.get(name, name)
            entry = catalog.get(exposed)
            if entry is not None:
                chosen.setdefault(exposed, entry if isinstance(entry, ToolSpec) else entry.spec)
        return list(chosen.values())

    async def invoke(self, call: ToolCall) -> str:
        catalog, aliases = self._catalog()
        entry = catalog.get(aliases.get(call.name, call.name))
        if isinstance(entry, ToolSpec):
            return await self._builtin.invoke(call)
        if isinstance(entry, _McpTool):
            return await entry.server.call(entry.tool, call.arguments, entry.spec.parameters)
        server = self._servers.get(call.name.partition(".")[0]) if "." in call.name else None
        if server is not None and server.state is not ServerState.READY:
            raise ToolCallFailed(ToolFailure.UNAVAILABLE, f"MCP server {server.name!r} is unavailable: {server.error}")
        raise ToolCallFailed(ToolFailure.UNKNOWN_TOOL, f"no tool named {call.name!r}")

    def catalogue(self) -> ToolCatalogue:
        """The tools under the names `specs` takes now, each MCP server's with its state."""
        catalog, aliases = self._catalog()
        qualified = {exposed: name for name, exposed in aliases.items()}
        builtin = tuple(NamedTool(entry, name) for name, entry in catalog.items() if isinstance(entry, ToolSpec))
        servers = tuple(
            ServerTools(server.status(), f"{server.name}.*", tuple(
                NamedTool(entry.spec, qualified[name]) for name, entry in catalog.items()
                if isinstance(entry, _McpTool) and entry.server is server
            ))
            for server in self._servers
        )
        return ToolCatalogue(builtin, servers)

    def _catalog(self) -> tuple[dict[str, ToolSpec | _McpTool], dict[str, str]]:
        """(exposed name → tool, qualified `server.tool` → exposed name)."""
        catalog: dict[str, ToolSpec | _McpTool] = {s.name: s for s in self._builtin.specs(self._builtin.names)}
        listed = [(server, tool) for server in self._servers for tool in server.tools]
        counts = Counter(_safe(tool.name) for _, tool in listed)
        aliases: dict[str, str] = {}
        for server, tool in listed:
            bare = _safe(tool.name)
            qualified = f"{server.name}.{bare}"
            exposed = bare if counts[bare] == 1 and bare not in catalog else qualified
            if exposed in catalog:
                continue  # the same name twice on one server: the first one wins
            spec = _spec(exposed, tool.description or tool.title, tool.input_schema, server.config.sequential)
            catalog[exposed] = _McpTool(server, tool.name, spec)
            aliases[qualified] = exposed
        return catalog, aliases


def _safe(name: str) -> str:
    """A tool name as memagent's ToolSpec allows it (letters, digits, `_`, `-`)."""
    return _NOT_IN_A_NAME.sub("_", name)[:64] or "tool"


def _spec(name: str, description: str | None, schema: Mapping[str, Any] | None, sequential: bool) -> ToolSpec:
    parameters = dict(schema or {})
    parameters["type"] = "object"
    return ToolSpec(
        name=name, description=(description or name).strip()[:1024], parameters=parameters, sequential=sequential
    )
