from collections.abc import Sequence
from typing import Protocol

from domain.tools import ToolCall, ToolFailure, ToolSpec


class ToolCallFailed(Exception):
    """Raised by a ToolBox when a call fails in a way the failure policy knows."""

    def __init__(self, failure: ToolFailure, detail: str) -> None:
        super().__init__(detail)
        self.failure = failure
        self.detail = detail


class ToolBox(Protocol):
    """The tools of one turn: built-in, MCP or retrieval, all behind one port."""

    def specs(self, names: Sequence[str]) -> list[ToolSpec]:
        """The specs of the named tools that exist."""
        ...

    async def invoke(self, call: ToolCall) -> str:
        """Run a call and return its output; raise `ToolCallFailed` on a known failure."""
        ...
