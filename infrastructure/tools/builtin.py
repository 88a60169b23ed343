"""Built-in tools and the ToolBox that serves them."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from application.ports.tools import ToolBox, ToolCallFailed
from domain.tools import ToolCall, ToolFailure, ToolSpec

ToolFunction = Callable[[Mapping[str, Any]], Awaitable[str]]


@dataclass(frozen=True, slots=True)
class BuiltinTool:
    spec: ToolSpec
    run: ToolFunction


async def current_time(arguments: Mapping[str, Any]) -> str:
    zone_name = arguments.get("timezone", "UTC")
    if not isinstance(zone_name, str):
        raise ToolCallFailed(ToolFailure.INVALID_ARGUMENTS, "timezone must be a string, e.g. 'Europe/Paris'")
    try:
        zone = ZoneInfo(zone_name)
    except (ZoneInfoNotFoundError, ValueError) as error:
        raise ToolCallFailed(ToolFailure.INVALID_ARGUMENTS, f"unknown timezone {zone_name!r}") from error
    return json.dumps({"timezone": zone_name, "datetime": datetime.now(UTC).astimezone(zone).isoformat()})


CURRENT_TIME = BuiltinTool(
    ToolSpec(
        name="current_time",
        description="The current date and time in a given IANA timezone (default UTC).",
        parameters={
            "type": "object",
            "properties": {"timezone": {"type": "string", "description": "IANA name, e.g. Europe/Paris"}},
            "required": [],
        },
    ),
    current_time,
)


class BuiltinToolBox(ToolBox):
    def __init__(self, tools: Sequence[BuiltinTool] = (CURRENT_TIME,)) -> None:
        self._tools = {tool.spec.name: tool for tool in tools}

    def specs(self, names: Sequence[str]) -> list[ToolSpec]:
        return [self._tools[name].spec for name in names if name in self._tools]

    async def invoke(self, call: ToolCall) -> str:
        tool = self._tools.get(call.name)
        if tool is None:
            raise ToolCallFailed(ToolFailure.UNKNOWN_TOOL, f"no tool named {call.name!r}")
        return await tool.run(call.arguments)
