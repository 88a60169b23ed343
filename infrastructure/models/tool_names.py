"""Tool names as the OpenAI wire allows them, and back.

OpenAI-style APIs accept function names matching [A-Za-z0-9_-]{1,64}; memagent's
tools may be named `server.tool` (MCP) or be longer. A name that does not fit is
sanitised and suffixed with a hash of the original, so two names never collide
and the same name always maps the same way, in every round of a turn. Mapping
back uses the names a request knew, so it never has to guess.
"""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING

from domain.conversations.messages import Msg, ToolResultBlock, ToolUseBlock

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from domain.tools.calls import ToolSpec

_ALLOWED = re.compile(r"[A-Za-z0-9_-]{1,64}")
_NOT_ALLOWED = re.compile(r"[^A-Za-z0-9_-]")


def wire_name(name: str) -> str:
    if _ALLOWED.fullmatch(name):
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{_NOT_ALLOWED.sub('_', name)[:55]}_{digest}"


class ToolNames:
    """The wire ↔ domain names of one request."""

    def __init__(self, names: Iterable[str]) -> None:
        self._domain = {wire_name(name): name for name in names}

    @classmethod
    def of(cls, tools: Sequence[ToolSpec], messages: Sequence[Msg]) -> ToolNames:
        """Names offered now and names used earlier in the prompt (the last round offers none)."""
        used = (
            block.name for msg in messages for block in msg.content if isinstance(block, ToolUseBlock | ToolResultBlock)
        )
        return cls([*(t.name for t in tools), *used])

    @staticmethod
    def wire(name: str) -> str:
        return wire_name(name)

    def domain(self, wire: str) -> str:
        """A name the request never offered passes through; the toolbox then calls it unknown."""
        return self._domain.get(wire, wire)
