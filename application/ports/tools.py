from collections.abc import Sequence
from typing import Protocol

from domain.tools import ToolCall, ToolSpec


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
