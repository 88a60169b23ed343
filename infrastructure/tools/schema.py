"""JSON Schemas for tools: generated from a typed Python signature, and checked before a call.

Generation covers what a tool's parameters need: `str`, `int`, `float`, `bool`, `Literal[...]`,
`X | None` (optional), `list[X]`, and `Annotated[X, "description"]`; descriptions also come from
the docstring's `Args:` section. The validator knows the keywords generation produces plus the
common ones of other tools' schemas (MCP servers send theirs); a keyword it does not know is
ignored, so it never refuses arguments that a full JSON Schema validator would accept.
"""

from __future__ import annotations

import inspect
import math
import re
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from infrastructure.errors import SchemaError, SchemaViolation

JsonSchema = dict[str, Any]

_SCALARS: dict[type, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}
_ARGS_HEADER = re.compile(r"^\s*(Args|Arguments|Parameters):\s*$")
_SECTION_HEADER = re.compile(r"^\s*(Returns|Raises|Yields|Examples?|Notes?|See Also):\s*$")
_PARAM_LINE = re.compile(r"^\s*(\*{0,2}\w+)\s*(\([^)]*\))?\s*:\s*(.*)$")


# -- generation ---------------------------------------------------------------------------------


def docstring_parts(function: Callable[..., Any]) -> tuple[str, dict[str, str]]:
    """The description (text before `Args:`) and each parameter's description."""
    doc = inspect.getdoc(function) or ""
    lines = doc.splitlines()
    summary: list[str] = []
    params: dict[str, str] = {}
    current: str | None = None
    in_args = False
    in_summary = True
    for line in lines:
        if _SECTION_HEADER.match(line):
            in_args = in_summary = False
            continue
        if _ARGS_HEADER.match(line):
            in_summary = False
            in_args, current = True, None
            continue
        if in_args:
            if line.strip() and not line.startswith((" ", "\t")):
                in_args, current = False, None  # the next section (Returns:, Raises:) or prose
            else:
                match = _PARAM_LINE.match(line)
                indent = len(line) - len(line.lstrip())
                if match and (current is None or indent <= _indent_of(lines, current)):
                    current = match.group(1).lstrip("*")
                    params[current] = match.group(3).strip()
                elif current is not None and line.strip():
                    params[current] = f"{params[current]} {line.strip()}".strip()
                continue
        if in_summary:
            summary.append(line)
    description = " ".join(" ".join(summary).split())
    return description, params


def _indent_of(lines: Sequence[str], name: str) -> int:
    for line in lines:
        match = _PARAM_LINE.match(line)
        if match and match.group(1).lstrip("*") == name:
            return len(line) - len(line.lstrip())
    return 0


def type_schema(annotation: Any) -> tuple[JsonSchema, bool]:
    """(schema, nullable) of one annotation."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        inner, *extras = typing.get_args(annotation)
        schema, nullable = type_schema(inner)
        notes = [e for e in extras if isinstance(e, str)]
        if notes:
            schema = {**schema, "description": " ".join(notes)}
        return schema, nullable
    if origin in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(members) != 1:
            raise SchemaError(f"only `X | None` unions are supported, not {annotation!r}")
        schema, _ = type_schema(members[0])
        return schema, True
    if origin is typing.Literal:
        values = list(typing.get_args(annotation))
        kinds = {_SCALARS.get(type(v)) for v in values}
        if None in kinds or len(kinds) != 1:
            raise SchemaError(f"Literal values must share one scalar type: {values!r}")
        return {"type": kinds.pop(), "enum": values}, False
    if origin in (list, Sequence, typing.Sequence):
        (item,) = typing.get_args(annotation) or (str,)
        item_schema, item_nullable = type_schema(item)
        return {"type": "array", "items": _nullable(item_schema) if item_nullable else item_schema}, False
    if annotation in _SCALARS:
        return {"type": _SCALARS[annotation]}, False
    raise SchemaError(f"unsupported parameter type {annotation!r}")


def _nullable(schema: JsonSchema) -> JsonSchema:
    kind = schema.get("type")
    if isinstance(kind, str):
        enum = schema.get("enum")
        return {**schema, "type": [kind, "null"], **({"enum": [*enum, None]} if enum else {})}
    return {"anyOf": [schema, {"type": "null"}]}


def parameters_schema(function: Callable[..., Any]) -> JsonSchema:
    """The JSON Schema (an object) of a function's parameters, from its type hints."""
    hints = typing.get_type_hints(function, include_extras=True)
    _, described = docstring_parts(function)
    properties: dict[str, JsonSchema] = {}
    required: list[str] = []
    for name, parameter in inspect.signature(function).parameters.items():
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD, parameter.POSITIONAL_ONLY):
            raise SchemaError(f"{function.__name__}: parameter {name!r} must be a plain or keyword parameter")
        if name not in hints:
            raise SchemaError(f"{function.__name__}: parameter {name!r} has no type hint")
        schema, nullable = type_schema(hints[name])
        if nullable:
            schema = _nullable(schema)
        if name in described and "description" not in schema:
            schema = {**schema, "description": described[name]}
        if parameter.default is parameter.empty:
            required.append(name)
        else:
            schema = {**schema, "default": parameter.default}
        properties[name] = schema
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


# -- validation ---------------------------------------------------------------------------------

_TYPE_CHECKS: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: (isinstance(v, int) and not isinstance(v, bool))
    or (isinstance(v, float) and v.is_integer()),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "array": lambda v: isinstance(v, list | tuple),
    "object": lambda v: isinstance(v, Mapping),
}
_ARTICLE = {"integer": "an integer", "array": "an array", "object": "an object"}


def validate(schema: Mapping[str, Any], value: Any) -> None:
    """Raise `SchemaViolation` with one plain line if `value` does not match `schema`."""
    problem = _problem(schema, value, "")
    if problem is not None:
        raise SchemaViolation(problem)


def _where(path: str) -> str:
    return f"'{path}'" if path else "the arguments"


def _problem(schema: Mapping[str, Any], value: Any, path: str) -> str | None:  # noqa: C901 - one keyword each
    if not isinstance(schema, Mapping):
        return None
    kind = schema.get("type")
    if kind is not None:
        kinds = [kind] if isinstance(kind, str) else list(kind)
        known = [k for k in kinds if k in _TYPE_CHECKS]
        if known and len(known) == len(kinds) and not any(_TYPE_CHECKS[k](value) for k in known):
            wanted = " or ".join(_ARTICLE.get(k, f"a {k}") for k in known)
            return f"{_where(path)} must be {wanted}, not {_json_type(value)}"
    if "enum" in schema and isinstance(schema["enum"], list) and value not in schema["enum"]:
        options = ", ".join(repr(o) for o in schema["enum"][:20])
        return f"{_where(path)} must be one of {options}"
    if "const" in schema and value != schema["const"]:
        return f"{_where(path)} must be {schema['const']!r}"
    for keyword in ("anyOf", "oneOf"):
        alternatives = schema.get(keyword)
        if isinstance(alternatives, list) and alternatives and all(_problem(o, value, path) for o in alternatives):
            return _problem(alternatives[0], value, path)
    for option in schema.get("allOf", []) if isinstance(schema.get("allOf"), list) else []:
        if (problem := _problem(option, value, path)) is not None:
            return problem
    if isinstance(value, str):
        return _string_problem(schema, value, path)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return _number_problem(schema, value, path)
    if isinstance(value, list | tuple):
        return _array_problem(schema, value, path)
    if isinstance(value, Mapping):
        return _object_problem(schema, value, path)
    return None


def _string_problem(schema: Mapping[str, Any], value: str, path: str) -> str | None:
    if isinstance(schema.get("minLength"), int) and len(value) < schema["minLength"]:
        return f"{_where(path)} must have at least {schema['minLength']} characters"
    if isinstance(schema.get("maxLength"), int) and len(value) > schema["maxLength"]:
        return f"{_where(path)} must have at most {schema['maxLength']} characters"
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        try:
            if re.search(pattern, value) is None:
                return f"{_where(path)} must match {pattern!r}"
        except re.error:
            return None  # a pattern Python cannot read: not ours to enforce
    return None


def _number_problem(schema: Mapping[str, Any], value: float, path: str) -> str | None:
    if isinstance(value, float) and not math.isfinite(value):
        return f"{_where(path)} must be a finite number"
    bounds: tuple[tuple[str, Callable[[float], bool], str], ...] = (
        ("minimum", lambda b: value >= b, "at least"),
        ("maximum", lambda b: value <= b, "at most"),
        ("exclusiveMinimum", lambda b: value > b, "more than"),
        ("exclusiveMaximum", lambda b: value < b, "less than"),
    )
    for keyword, holds, words in bounds:
        bound = schema.get(keyword)
        if isinstance(bound, int | float) and not isinstance(bound, bool) and not holds(bound):
            return f"{_where(path)} must be {words} {bound}"
    return None


def _array_problem(schema: Mapping[str, Any], value: Sequence[Any], path: str) -> str | None:
    if isinstance(schema.get("minItems"), int) and len(value) < schema["minItems"]:
        return f"{_where(path)} must have at least {schema['minItems']} items"
    if isinstance(schema.get("maxItems"), int) and len(value) > schema["maxItems"]:
        return f"{_where(path)} must have at most {schema['maxItems']} items"
    items = schema.get("items")
    if isinstance(items, Mapping):
        for index, item in enumerate(value):
            if (problem := _problem(items, item, f"{path}[{index}]" if path else f"[{index}]")) is not None:
                return problem
    return None


def _object_problem(schema: Mapping[str, Any], value: Mapping[str, Any], path: str) -> str | None:
    properties = schema.get("properties")
    properties = properties if isinstance(properties, Mapping) else {}
    required = schema.get("required")
    for name in required if isinstance(required, list) else []:
        if name not in value:
            return f"'{_join(path, name)}' is required"
    extra = schema.get("additionalProperties", True)
    for name, item in value.items():
        where = _join(path, str(name))
        if name in properties:
            if (problem := _problem(properties[name], item, where)) is not None:
                return problem
        elif extra is False:
            allowed = ", ".join(sorted(properties)) or "none"
            return f"unknown argument '{where}' (allowed: {allowed})"
        elif isinstance(extra, Mapping) and (problem := _problem(extra, item, where)) is not None:
            return problem
    return None


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "an array"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


def with_defaults(schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments with each missing property's `default` filled in."""
    filled = dict(arguments)
    properties = schema.get("properties")
    for name, prop in (properties.items() if isinstance(properties, Mapping) else ()):
        if name not in filled and isinstance(prop, Mapping) and "default" in prop:
            filled[name] = prop["default"]
    return filled
