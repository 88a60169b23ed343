"""ReAct output parsing: a fenced ```json {"name", "args"}``` block becomes a ToolCall."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from domain.tools import ToolCall, ToolSpec

_FENCE = re.compile(r"```(?:json)?\s*+(\{.*?\})\s*+```", re.DOTALL)


@dataclass(frozen=True, slots=True)
class ReactStep:
    """What a ReAct model said: its reasoning, and a tool call or nothing."""

    thought: str
    call: ToolCall | None


def parse_react_output(text: str, call_id: str) -> ReactStep:
    """Parse a model's ReAct output. Anything unparseable is a plain answer."""
    match = _FENCE.search(text)
    if match is None:
        return ReactStep(thought=text, call=None)
    try:
        payload = json.loads(match.group(1))
    except json.JSONDecodeError:
        return ReactStep(thought=text, call=None)
    name = payload.get("name") if isinstance(payload, dict) else None
    args = payload.get("args", payload.get("arguments", {})) if isinstance(payload, dict) else None
    if not isinstance(name, str) or not name or not isinstance(args, dict):
        return ReactStep(thought=text, call=None)
    thought = text[: match.start()].strip()
    return ReactStep(thought=thought, call=ToolCall(id=call_id, name=name, arguments=args))


def react_instructions(tools: list[ToolSpec]) -> str:
    """The system prompt addition that teaches a reasoning-only model to call tools."""
    described = "\n".join(
        f"- {t.name}: {t.description}\n  arguments (JSON Schema): {json.dumps(dict(t.parameters))}"
        for t in tools
    )
    return (
        "You can use these tools:\n"
        f"{described}\n\n"
        "To use one, reply with exactly this block and nothing before or after it:\n"
        '```json\n{"name": "<tool name>", "args": {<arguments>}}\n```\n'
        "You will get the result in the next message. When you can answer, reply "
        "with the answer only, without a JSON block."
    )
