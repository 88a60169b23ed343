"""Domain messages and tool specs → the OpenAI Chat Completions request body. Pure functions."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from domain.conversations.messages import ImageBlock, Msg, Role, TextBlock, ToolResultBlock, ToolUseBlock
from domain.conversations.structured_output import OutputKind
from domain.tools.client_tools import ChoiceMode

if TYPE_CHECKING:
    from collections.abc import Sequence

    from domain.agents.config import ModelParams
    from domain.tools.calls import ToolSpec
    from infrastructure.models.tool_names import ToolNames


def openai_response_format(params: ModelParams | None) -> dict[str, Any]:
    """The call's structured output as Chat Completions' `response_format`; none: `{}`."""
    output = params.response_format if params is not None else None
    if output is None:
        return {}
    if output.kind is OutputKind.JSON_OBJECT:
        return {"response_format": {"type": "json_object"}}
    schema = {"name": output.name, "schema": dict(output.schema), "strict": output.strict}
    return {"response_format": {"type": "json_schema", "json_schema": schema}}


def openai_tool_choice(params: ModelParams | None, names: ToolNames) -> dict[str, Any]:
    """The call's forced tool choice (`required`, or a named function by its wire name); none: `{}`,
    which leaves the model to decide (`auto`)."""
    choice = params.tool_choice if params is not None else None
    if choice is None or not choice.forces:
        return {}
    if choice.mode is ChoiceMode.REQUIRED:
        return {"tool_choice": "required"}
    return {"tool_choice": {"type": "function", "function": {"name": names.wire(choice.name)}}}


def openai_sampling(params: ModelParams | None) -> dict[str, Any]:
    """The agent's sampling settings that are set, as Chat Completions fields; none: `{}`, so the
    request is what it was without them. `max_tokens` rather than `max_completion_tokens`: every
    OpenAI-compatible server (vLLM, Ollama, DeepSeek, Qwen) reads it, and OpenAI still accepts it for
    its chat models (not for the o-series, which take only `max_completion_tokens`)."""
    if params is None:
        return {}
    given = {"temperature": params.temperature, "max_tokens": params.max_tokens, "top_p": params.top_p}
    return {name: value for name, value in given.items() if value is not None}


def openai_tools(tools: Sequence[ToolSpec], names: ToolNames) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": names.wire(tool.name),
                "description": tool.description,
                "parameters": dict(tool.parameters),
            },
        }
        for tool in tools
    ]


def openai_messages(messages: Sequence[Msg], names: ToolNames) -> list[dict[str, Any]]:
    """One message per Msg, except that each tool result is a `tool` message of its own."""
    converted: list[dict[str, Any]] = []
    for msg in messages:
        if msg.role is not Role.TOOL:
            converted.append(_message(msg, names))
        converted.extend(
            {"role": "tool", "tool_call_id": block.tool_use_id, "content": block.output}
            for block in msg.content
            if isinstance(block, ToolResultBlock)
        )
    return converted


def _message(msg: Msg, names: ToolNames) -> dict[str, Any]:
    if msg.role is Role.SYSTEM:
        # a plain string: several OpenAI-compatible servers reject list content on `system`
        return {"role": "system", "content": msg.text}
    if msg.role is Role.USER:
        return {"role": "user", "content": _user_content(msg)}
    calls = [
        {
            "id": block.id,
            "type": "function",
            "function": {"name": names.wire(block.name), "arguments": json.dumps(dict(block.input))},
        }
        for block in msg.content
        if isinstance(block, ToolUseBlock)
    ]
    # `content: null` is how OpenAI itself sends an assistant turn that only calls tools
    message: dict[str, Any] = {"role": "assistant", "content": msg.text or (None if calls else "")}
    if calls:
        message["tool_calls"] = calls
    return message


def _user_content(msg: Msg) -> str | list[dict[str, Any]]:
    """A string for text only (what every server accepts), content parts when there are images."""
    if not any(isinstance(block, ImageBlock) for block in msg.content):
        return msg.text
    parts: list[dict[str, Any]] = []
    for block in msg.content:
        if isinstance(block, TextBlock):
            parts.append({"type": "text", "text": block.text})
        elif isinstance(block, ImageBlock):
            parts.append({"type": "image_url", "image_url": {"url": block.url}})
    return parts
