"""OutputCheck: one turn's structured output (domain.conversations.structured_output) against its model.

It says what the model is given (the format itself, or instructions in the system prompt) and
whether and how an answer is checked: parsed as JSON, a `json_object` must be an object, a
`json_schema` answer must match its schema.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from application.off_loop import parsed
from domain.agents.config import ModelParams
from domain.conversations.structured_output import OutputKind, parsed_answer

if TYPE_CHECKING:
    from application.ports.schema_check import SchemaCheck
    from domain.conversations.structured_output import OutputFormat


@dataclass(frozen=True, slots=True)
class OutputCheck:
    format: OutputFormat
    schemas: SchemaCheck
    native: bool  # the model's profile takes `response_format` itself

    @property
    def checked(self) -> bool:
        return self.format.checked(self.native)

    @property
    def instructions(self) -> str:
        """The system prompt's addition: none for a model that takes a schema itself; JSON mode is
        always said in words (OpenAI refuses `json_object` unless the messages ask for JSON)."""
        if self.native and self.format.kind is OutputKind.JSON_SCHEMA:
            return ""
        return self.format.instructions()

    def params(self, params: ModelParams | None) -> ModelParams | None:
        """The call's settings, with the format when the model takes it."""
        if not self.native:
            return params
        return replace(params or ModelParams(), response_format=self.format)

    async def problem(self, answer: str) -> str | None:
        """What is wrong with `answer` (one line), or None when it passes."""
        value, problem = await parsed(parsed_answer, answer)
        if problem is not None:
            return problem
        if self.format.kind is OutputKind.JSON_OBJECT:
            return None if isinstance(value, dict) else "it is JSON but not an object"
        return await self.schemas.value_problem(value, self.format.schema)
