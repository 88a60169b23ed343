"""SchemaCheck: JSON Schema, for structured output (domain.conversations.structured_output)."""

from collections.abc import Mapping
from typing import Any, Protocol


class SchemaCheck(Protocol):
    def schema_problem(self, schema: Mapping[str, Any]) -> str | None:
        """What makes `schema` no valid JSON Schema (one readable line), or None; a reference that
        points outside the schema, or nowhere in it, is a problem."""
        ...

    async def value_problem(self, value: Any, schema: Mapping[str, Any]) -> str | None:
        """The first way `value` fails `schema` (one readable line, naming where), or None; never
        fetches anything, and never blocks the event loop."""
        ...
