"""Built-in tools, declared once: a typed function becomes a tool with a generated JSON Schema.

    registry = ToolRegistry()

    @registry.tool()
    async def current_time(timezone: str = "UTC") -> str:
        \"\"\"The current date and time.

        Args:
            timezone: IANA name, e.g. Europe/Paris.
        \"\"\"

The name is the function's, the description its docstring, the parameters' schema comes from
its signature. Arguments are checked against that schema before the call: a violation raises
`ToolCallFailed(INVALID_ARGUMENTS)` with one plain line, so the model can correct itself. A tool
raises `ToolCallFailed` for the failures it knows; what it returns that is not a `str` is sent
as JSON.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from application.errors import ToolCallFailed
from application.ports.tools import ToolBox
from domain.tools.calls import ToolCall, ToolFailure, ToolSpec
from infrastructure.errors import SchemaViolation
from infrastructure.tools.schema import docstring_parts, parameters_schema, validate, with_defaults

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True, slots=True)
class BuiltinTool:
    spec: ToolSpec
    function: Callable[..., Any]

    @classmethod
    def from_function(
        cls, function: Callable[..., Any], name: str | None = None, description: str | None = None,
        sequential: bool = False,
    ) -> BuiltinTool:
        summary, _ = docstring_parts(function)
        spec = ToolSpec(
            name=name or function.__name__,
            description=description or summary or (name or function.__name__),
            parameters=parameters_schema(function),
            sequential=sequential,
        )
        return cls(spec, function)

    async def run(self, arguments: Mapping[str, Any]) -> str:
        try:
            validate(self.spec.parameters, arguments)
        except SchemaViolation as violation:
            raise ToolCallFailed(ToolFailure.INVALID_ARGUMENTS, str(violation)) from None
        kwargs = _integers(self.spec.parameters, with_defaults(self.spec.parameters, arguments))
        result = self.function(**kwargs)
        if inspect.isawaitable(result):
            result = await result
        return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, default=str)


def _integers(schema: Mapping[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    """JSON Schema counts 3.0 as an integer; the function gets 3."""
    properties = schema.get("properties", {})
    for name, value in arguments.items():
        kind = properties.get(name, {}).get("type")
        if isinstance(value, float) and (kind == "integer" or (isinstance(kind, list) and "integer" in kind)):
            arguments[name] = int(value) if value.is_integer() else value
    return arguments


class ToolRegistry(ToolBox):
    """The built-in tools by name; also a ToolBox of its own."""

    def __init__(self, tools: Sequence[BuiltinTool] = ()) -> None:
        self._tools: dict[str, BuiltinTool] = {}
        for tool in tools:
            self.add(tool)

    def add(self, tool: BuiltinTool) -> None:
        if tool.spec.name in self._tools:
            raise ValueError(f"a built-in tool named {tool.spec.name!r} is already registered")
        self._tools[tool.spec.name] = tool

    def tool(
        self, name: str | None = None, description: str | None = None, *, sequential: bool = False
    ) -> Callable[[F], F]:
        """Decorator: register a typed function (sync or async) as a tool. `sequential`: its calls
        never overlap (see `ToolSpec`)."""

        def register(function: F) -> F:
            self.add(BuiltinTool.from_function(function, name, description, sequential))
            return function

        return register

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    def get(self, name: str) -> BuiltinTool | None:
        return self._tools.get(name)

    def specs(self, names: Sequence[str]) -> list[ToolSpec]:
        return [self._tools[name].spec for name in dict.fromkeys(names) if name in self._tools]

    async def invoke(self, call: ToolCall) -> str:
        tool = self._tools.get(call.name)
        if tool is None:
            raise ToolCallFailed(ToolFailure.UNKNOWN_TOOL, f"no tool named {call.name!r}")
        return await tool.run(call.arguments)


