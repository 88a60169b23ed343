"""Tool calls streamed in pieces, assembled into domain ToolCalls.

Arguments that are not a JSON object neither fail the turn nor become `{}` (which a tool
with defaults would happily run): the call keeps the raw text under INVALID_ARGUMENTS_KEY.
The trace shows what the model wrote, and a tool whose schema allows no unknown arguments
(every built-in) answers with an argument error the model can correct.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from application.errors import ModelError
from application.off_loop import parsed
from domain.tools.calls import ToolCall, parse_arguments

if TYPE_CHECKING:
    from infrastructure.models.tool_names import ToolNames


@dataclass(slots=True)
class _Pending:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class ToolCallAssembler:
    """Collects the deltas of parallel calls by their index (they may arrive interleaved)."""

    def __init__(self) -> None:
        self._pending: dict[int, _Pending] = {}

    def add(self, index: int, call_id: str | None, name: str | None, arguments: str | None) -> None:
        pending = self._pending.setdefault(index, _Pending())
        pending.id = pending.id or call_id or ""
        pending.name = pending.name or name or ""
        if arguments:
            pending.arguments.append(arguments)

    async def calls(self, names: ToolNames) -> tuple[ToolCall, ...]:
        """The calls, by index; long arguments (a file's text, a whole document) parsed off the loop."""
        if any(not p.name for p in self._pending.values()):
            raise ModelError("The model sent a tool call without a tool name.")
        return tuple([
            ToolCall(
                id=p.id or f"call_{uuid.uuid4().hex[:24]}",  # a few local servers send no id
                name=names.domain(p.name),
                arguments=await parsed(parse_arguments, "".join(p.arguments)),
            )
            for _, p in sorted(self._pending.items())
        ])
