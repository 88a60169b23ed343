from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from application.ports.tool_servers import ToolServerStatus
from domain.tools.calls import ToolCall, ToolSpec


class ToolBox(Protocol):
    """The tools of one turn: built-in, MCP or retrieval, all behind one port."""

    def specs(self, names: Sequence[str]) -> list[ToolSpec]:
        """The specs of the named tools that exist."""
        ...

    async def invoke(self, call: ToolCall) -> str:
        """Run a call and return its output; raise `ToolCallFailed` on a known failure."""
        ...


class Invokes(Protocol):
    """Runs one tool call; what the tool executor needs of the tools of a turn."""

    async def invoke(self, call: ToolCall) -> str:
        """The call's output; raise `ToolCallFailed` on a known failure."""
        ...


@dataclass(frozen=True, slots=True)
class NamedTool:
    """A tool an agent config may name: `spec.name` is the name it is offered under now;
    `qualified_name` reaches it whatever else is configured (an MCP tool's `server.tool`, a
    built-in's own name, since a built-in always keeps it)."""

    spec: ToolSpec
    qualified_name: str


@dataclass(frozen=True, slots=True)
class ServerTools:
    """One configured tool server, how it is doing, and the tools it last listed (kept while it is
    down). `every_tool` is the name that enables all of them in an agent config (`server.*`)."""

    status: ToolServerStatus
    every_tool: str
    tools: tuple[NamedTool, ...] = ()


@dataclass(frozen=True, slots=True)
class ToolCatalogue:
    builtin: tuple[NamedTool, ...]
    servers: tuple[ServerTools, ...] = ()


class ToolCatalog(Protocol):
    """Every tool an agent config may name, for the account that builds agents."""

    def catalogue(self) -> ToolCatalogue: ...
