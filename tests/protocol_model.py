"""A test model that follows the protocol as a good model would, from what a request holds, so that a
client's conformance suite tests memagent and not a model's judgement:
- a request whose last message is a tool result answers in words, quoting that result;
- one that offers tools calls one when the tool choice forces it or the user's words name it (its
  name, or a word of it, or "tool"): the forced one, else the one named, else the first; its
  arguments are made from the tool's schema and the user's words (numbers in order; for a string,
  a quoted phrase in order, else the last word);
- one that asks for a JSON schema answers a JSON value that matches it; one that asks for JSON, an
  object whose keys are the quoted words of the request (else `answer`);
- any other answers "Hello! You said: …" with the user's words.
Plug it in with `ScriptedLLMServer.answer_by(protocol_script)`.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tests.llm_server_scripts import Script, TextScript, ToolCallsScript, _text_of, call

NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
QUOTED = re.compile(r"'([^']+)'|\"([^\"]+)\"")


def _quoted(said: str) -> list[str]:
    return [single or double for single, double in QUOTED.findall(said)]


def protocol_script(body: dict[str, Any]) -> Script:
    messages = body.get("messages") or [{}]
    last = messages[-1]
    if last.get("role") == "tool":
        return TextScript([f"The tool answered: {_text_of(last.get('content'))}"])
    said = _text_of(next((m.get("content") for m in reversed(messages) if m.get("role") == "user"), ""))
    tool = _chosen_tool(body, said)
    if tool is not None:
        function = tool["function"]
        arguments = _value(function.get("parameters") or {"type": "object"}, Words(said))
        return ToolCallsScript([call(function["name"], arguments)])
    answer = _structured_answer(body.get("response_format") or {}, said)
    return TextScript([answer if answer is not None else f"Hello! You said: {said}"])


def _chosen_tool(body: dict[str, Any], said: str) -> dict[str, Any] | None:
    tools = [t for t in body.get("tools") or () if t.get("type") == "function"]
    if not tools:
        return None
    choice = body.get("tool_choice")
    if isinstance(choice, dict):
        return next((t for t in tools if t["function"]["name"] == choice["function"]["name"]), None)
    words = set(re.findall(r"[a-z]+", said.lower()))
    named = [t for t in tools if t["function"]["name"].lower() in said.lower()
             or words & {part for part in t["function"]["name"].lower().split("_") if len(part) > 3}]
    if named or choice == "required" or "tool" in said.lower():
        return (named or tools)[0]
    return None


def _structured_answer(response_format: dict[str, Any], said: str) -> str | None:
    if response_format.get("type") == "json_schema":
        schema = response_format["json_schema"]["schema"]
        return json.dumps(_value(schema, Words(said), schema), ensure_ascii=False)
    if response_format.get("type") == "json_object":
        keys = _quoted(said) or ["answer"]
        return json.dumps(dict.fromkeys(keys, said), ensure_ascii=False)
    return None


class Words:
    """The user's numbers and phrases, each taken once, in order."""

    def __init__(self, said: str) -> None:
        self.numbers = NUMBER.findall(said)
        self.phrases = _quoted(said)
        words = re.findall(r"\w+", said)
        self.last = words[-1] if words else "value"

    def number(self) -> str:
        return self.numbers.pop(0) if self.numbers else "1"

    def phrase(self) -> str:
        return self.phrases.pop(0) if self.phrases else self.last


def _value(schema: dict[str, Any], words: Words, root: dict[str, Any] | None = None) -> Any:
    """A value matching `schema` (local `$ref`s and the first of `anyOf` followed)."""
    root = root or schema
    if "$ref" in schema:
        target: Any = root
        for part in schema["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        return _value(target, words, root)
    if "anyOf" in schema:
        return _value(next(s for s in schema["anyOf"] if s.get("type") != "null"), words, root)
    kind = schema.get("type", "object")
    if kind == "object":
        return {name: _value(sub, words, root) for name, sub in schema.get("properties", {}).items()}
    if kind in ("integer", "number"):
        taken = words.number()
        return int(float(taken)) if kind == "integer" else float(taken)
    if kind == "boolean":
        return True
    if kind == "array":
        return [_value(schema.get("items", {"type": "string"}), words, root)]
    if "enum" in schema:
        return schema["enum"][0]
    return words.phrase()
