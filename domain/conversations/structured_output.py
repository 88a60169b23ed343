"""Structured output: an answer that must be JSON, and one that must match a JSON Schema.

A request asks for it with OpenAI's `response_format` (`json_object`, or `json_schema` with a
schema, a name and `strict`). A model whose profile supports it gets the format itself; any other
gets `instructions` in its system prompt. An answer is checked when the request is `strict` or the
model had only the instructions; a wrong one gets one repair request, and a second wrong answer
ends the turn with `invalid_output` (docs/ARCHITECTURE.md §2).
"""

from __future__ import annotations

import enum
import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from domain.errors import DomainError

if TYPE_CHECKING:
    from collections.abc import Mapping

MAX_NAME = 64
NAME = re.compile(rf"[A-Za-z0-9_-]{{1,{MAX_NAME}}}")


class OutputKind(enum.StrEnum):
    JSON_OBJECT = "json_object"  # any JSON object
    JSON_SCHEMA = "json_schema"  # a JSON value matching `schema`


@dataclass(frozen=True, slots=True)
class OutputFormat:
    kind: OutputKind
    schema: Mapping[str, Any] = field(default_factory=dict)
    name: str = "answer"
    strict: bool = False

    def __post_init__(self) -> None:
        if self.kind is OutputKind.JSON_SCHEMA and not self.schema:
            raise DomainError("a json_schema format needs its schema")
        if NAME.fullmatch(self.name) is None:
            raise DomainError(f"a format's name is 1 to {MAX_NAME} letters, digits, '_' or '-' (as OpenAI's)")

    def checked(self, native: bool) -> bool:
        """Whether the answer is checked: asked for (`strict`), or the model had only the instructions."""
        return self.strict or not native

    def instructions(self) -> str:
        """The system prompt's part for a model that cannot take the format itself."""
        if self.kind is OutputKind.JSON_OBJECT:
            return "Answer with one JSON object and nothing else: no prose, no code fence."
        schema = json.dumps(self.schema, ensure_ascii=False, sort_keys=True)
        return (f"Answer with one JSON value named {self.name!r} that matches this JSON Schema, and nothing"
                f" else (no prose, no code fence):\n{schema}")

    def repair_request(self, problem: str) -> str:
        """What the model is told after an answer that did not pass the check."""
        return f"That answer is not valid: {problem}. Answer again with the JSON only. {self.instructions()}"


def unfenced(text: str) -> str:
    """The answer without a code fence around it (models without native support often add one)."""
    body = text.strip()
    if body.startswith("```"):
        body = body.split("\n", 1)[1] if "\n" in body else ""
        body = body.rstrip().removesuffix("```").strip()
    return body


def parsed_answer(text: str) -> tuple[Any, str | None]:
    """The answer's JSON value and None, or None and what is wrong with it; read through a fence."""
    try:
        return json.loads(unfenced(text)), None
    except json.JSONDecodeError as bad:
        return None, f"it is not JSON ({bad.msg} at character {bad.pos})"
    except RecursionError:  # "[[[[…" from a model: nested past what the parser can follow
        return None, "it is JSON nested too deep"
