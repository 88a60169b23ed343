"""The SchemaCheck port on the `jsonschema` package: the draft a schema names, else 2020-12."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from jsonschema import SchemaError, validators

from application.ports.schema_check import SchemaCheck

if TYPE_CHECKING:
    from collections.abc import Mapping

MAX_PROBLEM = 300  # characters: a long value quoted in the message is cut


class JsonSchemaCheck(SchemaCheck):
    def schema_problem(self, schema: Mapping[str, Any]) -> str | None:
        validator = validators.validator_for(schema)
        try:
            validator.check_schema(dict(schema))
        except SchemaError as bad:
            return _line(bad.message, bad.json_path)
        return None

    def value_problem(self, value: Any, schema: Mapping[str, Any]) -> str | None:
        validator = validators.validator_for(schema)(schema)
        error = next(iter(validator.iter_errors(value)), None)
        return None if error is None else _line(error.message, error.json_path)


def _line(message: str, where: str) -> str:
    text = f"{where}: {message}" if where != "$" else message
    return text if len(text) <= MAX_PROBLEM else text[: MAX_PROBLEM - 1] + "…"
