"""A workflow's inputs: what its start node declares (`inputs: [{name, type, description,
required, enum?, default?}]`), the JSON Schema a model sees when the workflow is its tool, and the
check of a run's values against them.

An input with a `default` is optional; one without is required unless it says `required: false`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from domain.workflows.graph import InputType
from domain.workflows.problems import InputsInvalid, Problem

if TYPE_CHECKING:
    from collections.abc import Mapping

    from domain.workflows.graph import Node

INPUT_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")  # `start.<name>` in a template, a tool's parameter
INPUT_FIELDS = ("name", "type", "description", "required", "enum", "default")
MAX_INPUTS = 64
_NO_DEFAULT = object()


@dataclass(frozen=True, slots=True)
class StartInput:
    name: str
    type: InputType
    description: str = ""
    required: bool = True
    enum: tuple[Any, ...] | None = None
    default: Any = _NO_DEFAULT

    @property
    def has_default(self) -> bool:
        return self.default is not _NO_DEFAULT

    def schema(self) -> dict[str, Any]:
        schema: dict[str, Any] = {"type": self.type.value}
        if self.description:
            schema["description"] = self.description
        if self.enum is not None:
            schema["enum"] = list(self.enum)
        if self.has_default:
            schema["default"] = self.default
        return schema


def matches(kind: InputType, value: Any) -> bool:
    """Whether `value` (as JSON gives it) is of the JSON Schema type `kind`."""
    if kind is InputType.BOOLEAN:
        return isinstance(value, bool)
    if isinstance(value, bool):  # JSON's true is no number: Python's bool is an int
        return False
    if kind is InputType.INTEGER:
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    expected: dict[InputType, type | tuple[type, ...]] = {
        InputType.STRING: str, InputType.NUMBER: (int, float), InputType.ARRAY: list, InputType.OBJECT: dict,
    }
    return isinstance(value, expected[kind])


def declaration_problems(raw: Any, path: str) -> list[Problem]:
    """What is wrong with a start node's `inputs` as JSON gives them."""
    if not isinstance(raw, list):
        return [Problem(path, "a list of inputs, each {name, type, description, required, enum, default}")]
    if len(raw) > MAX_INPUTS:
        return [Problem(path, f"at most {MAX_INPUTS} inputs")]
    problems: list[Problem] = []
    seen: set[str] = set()
    for index, item in enumerate(raw):
        at = f"{path}[{index}]"
        if not isinstance(item, dict):
            problems.append(Problem(at, "an input is an object {name, type, …}"))
            continue
        problems += _one_declaration(item, at)
        name = item.get("name")
        if isinstance(name, str):
            if name in seen:
                problems.append(Problem(f"{at}.name", f"the input {name!r} is declared twice"))
            seen.add(name)
    return problems


def _one_declaration(item: Mapping[str, Any], at: str) -> list[Problem]:
    problems = [Problem(f"{at}.{key}", f"not a field of an input (fields: {', '.join(INPUT_FIELDS)})")
                for key in item if key not in INPUT_FIELDS]
    name, kind = item.get("name"), item.get("type")
    if not isinstance(name, str) or not INPUT_NAME.fullmatch(name):
        problems.append(Problem(f"{at}.name", "a name of 1 to 64 letters, digits or '_', not starting with a digit"))
    if kind not in tuple(InputType):
        return [*problems, Problem(f"{at}.type", f"one of {', '.join(InputType)}")]
    problems += _value_problems(item, InputType(kind), at)
    return problems


def _value_problems(item: Mapping[str, Any], kind: InputType, at: str) -> list[Problem]:
    problems: list[Problem] = []
    if not isinstance(item.get("description", ""), str):
        problems.append(Problem(f"{at}.description", "a string"))
    if not isinstance(item.get("required", True), bool):
        problems.append(Problem(f"{at}.required", "true or false"))
    enum = item.get("enum")
    if "enum" in item and (not isinstance(enum, list) or not enum
                           or not all(matches(kind, value) for value in enum)):
        problems.append(Problem(f"{at}.enum", f"a non-empty list of values of type {kind}"))
    if "default" in item:
        default = item["default"]
        if not matches(kind, default):
            problems.append(Problem(f"{at}.default", f"a value of type {kind}"))
        elif isinstance(enum, list) and default not in enum:
            problems.append(Problem(f"{at}.default", "one of the input's enum values"))
        if item.get("required") is True:
            problems.append(Problem(f"{at}.required", "an input with a default is not required"))
    return problems


def declared_inputs(start: Node) -> tuple[StartInput, ...]:
    """The inputs of a start node `validation.parse_graph` accepted."""
    return tuple(
        StartInput(
            name=item["name"], type=InputType(item["type"]), description=item.get("description", ""),
            required="default" not in item and item.get("required", True),
            enum=tuple(item["enum"]) if "enum" in item else None, default=item.get("default", _NO_DEFAULT),
        )
        for item in start.config.get("inputs", ())
    )


def input_schema(start: Node) -> dict[str, Any]:
    """The JSON Schema of the start node's inputs: the parameters of the workflow as a tool."""
    inputs = declared_inputs(start)
    return {
        "type": "object",
        "properties": {i.name: i.schema() for i in inputs},
        "required": [i.name for i in inputs if i.required],
        "additionalProperties": False,
    }


def check_inputs(start: Node, values: Mapping[str, Any]) -> dict[str, Any]:
    """The run's inputs, defaults filled in. `InputsInvalid` names each input that is missing, of
    the wrong type, not one of its enum, or not declared at all."""
    inputs = declared_inputs(start)
    known = {i.name for i in inputs}
    problems = [Problem(f"inputs.{name}", "the workflow has no such input") for name in values if name not in known]
    checked: dict[str, Any] = {}
    for declared in inputs:
        problem = _value_problem(declared, values)
        if problem is not None:
            problems.append(Problem(f"inputs.{declared.name}", problem))
        elif declared.name in values:
            checked[declared.name] = values[declared.name]
        elif declared.has_default:
            checked[declared.name] = declared.default
    if problems:
        raise InputsInvalid(problems)
    return checked


def _value_problem(declared: StartInput, values: Mapping[str, Any]) -> str | None:
    if declared.name not in values:
        return "a required input is missing" if declared.required else None
    value = values[declared.name]
    if not matches(declared.type, value):
        return f"of type {declared.type}, not {_json_type(value)}"
    if declared.enum is not None and value not in declared.enum:
        return f"one of {', '.join(repr(v) for v in declared.enum)}"
    return None


def _json_type(value: Any) -> str:
    found = next((kind for kind in InputType if kind is not InputType.INTEGER and matches(kind, value)), None)
    return "null" if value is None else str(found or type(value).__name__)
