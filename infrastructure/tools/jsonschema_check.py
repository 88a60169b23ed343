"""The SchemaCheck port on the `jsonschema` package: the draft a schema names, else 2020-12.

A schema is the client's: its references may point only inside it (`#…`), and they are resolved in
an empty registry, so nothing is ever fetched (jsonschema's default registry would open any URL a
`$ref` names). Checking an answer runs in a worker thread: a costly `pattern` cannot stall the loop,
and the turn's timeout still ends the turn.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from jsonschema import SchemaError, validators
from referencing import Registry, Resource
from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT202012

from application.ports.schema_check import SchemaCheck

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

MAX_PROBLEM = 300  # characters: a long value quoted in the message is cut
REFERENCES = ("$ref", "$dynamicRef")
NO_FETCHING: Registry[Any] = Registry()


class JsonSchemaCheck(SchemaCheck):
    def schema_problem(self, schema: Mapping[str, Any]) -> str | None:
        if not isinstance(schema.get("$schema", ""), str):
            return "$schema must be a string naming a draft"
        try:
            validators.validator_for(schema).check_schema(dict(schema))
        except SchemaError as bad:
            return _line(bad.message, bad.json_path)
        return _reference_problem(schema)

    async def value_problem(self, value: Any, schema: Mapping[str, Any]) -> str | None:
        return await asyncio.to_thread(_first_error, value, schema)


def _first_error(value: Any, schema: Mapping[str, Any]) -> str | None:
    validator = validators.validator_for(schema)(schema, registry=NO_FETCHING)
    try:
        error = next(iter(validator.iter_errors(value)), None)
    except Unresolvable as bad:  # refused at request time; a schema is never fetched
        return f"the schema's reference {bad.ref!r} cannot be resolved"
    return None if error is None else _line(error.message, error.json_path)


def _reference_problem(schema: Mapping[str, Any]) -> str | None:
    resolver = NO_FETCHING.resolver_with_root(Resource.from_contents(schema, default_specification=DRAFT202012))
    for ref in _references(schema):
        if not ref.startswith("#"):
            return f"the reference {ref!r} points outside the schema: only `#…` references are allowed"
        try:
            resolver.lookup(ref)
        except Unresolvable:
            return f"the reference {ref!r} points nowhere in the schema"
    return None


def _references(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key in REFERENCES and isinstance(value, str):
                yield value
            else:
                yield from _references(value)
    elif isinstance(node, list):
        for item in node:
            yield from _references(item)


def _line(message: str, where: str) -> str:
    text = f"{where}: {message}" if where != "$" else message
    return text if len(text) <= MAX_PROBLEM else text[: MAX_PROBLEM - 1] + "…"
