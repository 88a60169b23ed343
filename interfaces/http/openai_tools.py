"""A request's client tools and `tool_choice` (domain.tools.client_tools), read from OpenAI's two shapes:
Chat Completions nests a function (`{"type": "function", "function": {"name", …}}`), the Responses
API does not (`{"type": "function", "name", …}`). A malformed one is 400 naming it."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from application.errors import InvalidParameter, UnsupportedParameter
from domain.errors import DomainError
from domain.tools.calls import ToolSpec
from domain.tools.client_tools import AUTO, ChoiceMode, ClientCall, ClientTools, ToolChoice

# OpenAI's own rule for a function's name.
NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
MAX_TOOLS = 128  # OpenAI's limit too


def client_tools(tools: list[Any] | None, choice: Any, *, nested: bool) -> ClientTools | None:
    """The request's tools (`nested`: Chat Completions' shape), or None when it offers none."""
    if not tools:
        if choice not in (None, "auto", "none"):
            raise InvalidParameter("`tool_choice` needs `tools`.", "tool_choice")
        return None
    if len(tools) > MAX_TOOLS:
        raise InvalidParameter(f"At most {MAX_TOOLS} tools per request.", "tools")
    specs = tuple(_spec(index, tool, nested) for index, tool in enumerate(tools))
    try:
        return ClientTools(specs, _choice(choice, nested))
    except DomainError as bad:
        raise InvalidParameter(f"tools: {bad}.", "tool_choice") from bad


def legacy_tools(functions: list[Any], call: Any) -> ClientTools | None:
    """The legacy `functions` and `function_call` (`none`, `auto`, or `{"name": …}`), as client tools."""
    tools = [{"type": "function", "function": function} for function in functions]
    choice = {"type": "function", "function": call} if isinstance(call, dict) else call
    try:
        found = client_tools(tools, choice, nested=True)
    except InvalidParameter as bad:  # named as the client named them
        def legacy(text: str) -> str:
            return text.replace("tool_choice", "function_call").replace("tools", "functions")
        raise InvalidParameter(legacy(bad.message), legacy(bad.param)) from bad
    return None if found is None else replace(found, legacy=True)


def client_call(call_id: str, name: Any, arguments: Any) -> ClientCall:
    """A call in a client's history; a name or arguments that are not strings count as none."""
    return ClientCall(call_id, name if isinstance(name, str) else "", arguments if isinstance(arguments, str) else "{}")


def _spec(index: int, tool: Any, nested: bool) -> ToolSpec:
    where = f"tools[{index}]"
    if not isinstance(tool, dict) or tool.get("type") != "function":
        kind = tool.get("type") if isinstance(tool, dict) else None
        raise UnsupportedParameter(f"{where}: only tools of type `function` are supported, not {kind!r}; the "
                                   "agent's own tools (its config) run on the server.", where)
    function = tool.get("function") if nested else tool
    if not isinstance(function, dict):
        raise InvalidParameter(f"{where}.function must be an object.", where)
    name, description = function.get("name"), function.get("description") or ""
    if not isinstance(name, str) or NAME.fullmatch(name) is None:
        raise InvalidParameter(f"{where}: a function's name is 1 to 64 letters, digits, '_' or '-'.", where)
    parameters = function.get("parameters") or {"type": "object", "properties": {}}
    if not isinstance(description, str) or not isinstance(parameters, dict):
        raise InvalidParameter(f"{where}: `description` is a string and `parameters` a JSON Schema object.", where)
    try:
        return ToolSpec(name, description, parameters)
    except DomainError as bad:
        raise InvalidParameter(f"{where}: {bad}.", where) from bad


def _choice(choice: Any, nested: bool) -> ToolChoice:
    if choice is None:
        return AUTO
    if isinstance(choice, str):
        try:
            mode = ChoiceMode(choice)
        except ValueError:
            mode = ChoiceMode.NAMED
        if mode is not ChoiceMode.NAMED:
            return ToolChoice(mode)
    elif isinstance(choice, dict) and choice.get("type") == "function":
        function = choice.get("function") if nested else choice
        name = function.get("name") if isinstance(function, dict) else None
        if isinstance(name, str) and name:
            return ToolChoice(ChoiceMode.NAMED, name)
    raise InvalidParameter("`tool_choice` is `auto`, `none`, `required`, or a function by its name.", "tool_choice")
