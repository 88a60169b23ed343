"""ReAct output parsing: a fenced ```json {"name", "args"}``` block becomes a ToolCall."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from domain.tools.calls import ToolCall, ToolSpec

# The old single pattern, "```(?:json)?\s*+(\{.*?\})\s*+```", tried every opening fence against the
# rest of the text: quadratic on a model's output of "```{" repeated. Its match always starts at the
# first opening fence (a later one's JSON starts later, so cannot close where the first cannot), so
# one search for the opening and one for the first closing after it give the same block, linearly.
_OPEN = re.compile(r"```(?:json)?\s*+\{")
_CLOSE = re.compile(r"\}\s*+```")


@dataclass(frozen=True, slots=True)
class ReactStep:
    """What a ReAct model said: its reasoning, and a tool call or nothing."""

    thought: str
    call: ToolCall | None


def fenced_json(text: str) -> tuple[int, str] | None:
    """Where the first fenced JSON object starts, and the object's text (braces included)."""
    opened = _OPEN.search(text)
    if opened is None:
        return None
    closed = _CLOSE.search(text, opened.end())
    if closed is None:
        return None
    return opened.start(), text[opened.end() - 1 : closed.start() + 1]


def parse_react_output(text: str, call_id: str) -> ReactStep:
    """Parse a model's ReAct output. Anything unparseable is a plain answer."""
    fenced = fenced_json(text)
    if fenced is None:
        return ReactStep(thought=text, call=None)
    start, block = fenced
    try:
        payload = json.loads(block)
    except (json.JSONDecodeError, RecursionError):  # nesting past the parser's depth is no call either
        return ReactStep(thought=text, call=None)
    name = payload.get("name") if isinstance(payload, dict) else None
    args = payload.get("args", payload.get("arguments", {})) if isinstance(payload, dict) else None
    if not isinstance(name, str) or not name or not isinstance(args, dict):
        return ReactStep(thought=text, call=None)
    thought = text[:start].strip()
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
