"""Built-in tools: schemas generated from typed signatures, arguments checked before the call."""

from __future__ import annotations

import json
from typing import Annotated, Literal

import pytest

from application.errors import ToolCallFailed
from domain.tools.calls import ToolCall, ToolFailure
from infrastructure.errors import SchemaError, SchemaViolation
from infrastructure.tools.builtin import builtin_tools
from infrastructure.tools.registry import BuiltinTool, ToolRegistry
from infrastructure.tools.schema import parameters_schema, validate


def search(
    query: str,
    limit: int = 5,
    ratio: float = 0.5,
    exact: bool = False,
    mode: Literal["fast", "deep"] = "fast",
    tags: list[str] | None = None,
    lang: Annotated[str, "an ISO 639-1 code"] = "en",
) -> dict[str, object]:
    """Search the notes.

    Longer explanation that still belongs to the description.

    Args:
        query: What to look for,
            over two lines.
        limit: How many results.
        tags: Only notes with these tags.

    Returns:
        The matches.
    """
    return {"query": query, "limit": limit, "ratio": ratio, "exact": exact, "mode": mode, "tags": tags, "lang": lang}


def test_the_schema_comes_from_the_signature_and_the_docstring() -> None:
    schema = parameters_schema(search)
    assert schema == {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What to look for, over two lines."},
            "limit": {"type": "integer", "description": "How many results.", "default": 5},
            "ratio": {"type": "number", "default": 0.5},
            "exact": {"type": "boolean", "default": False},
            "mode": {"type": "string", "enum": ["fast", "deep"], "default": "fast"},
            "tags": {
                "type": ["array", "null"], "items": {"type": "string"},
                "description": "Only notes with these tags.", "default": None,
            },
            "lang": {"type": "string", "description": "an ISO 639-1 code", "default": "en"},
        },
        "required": ["query"],
        "additionalProperties": False,
    }
    tool = BuiltinTool.from_function(search)
    assert tool.spec.name == "search"
    assert tool.spec.description == "Search the notes. Longer explanation that still belongs to the description."


def test_an_undescribable_signature_is_refused_at_declaration() -> None:
    def untyped(x) -> str:  # type: ignore[no-untyped-def]  # noqa: ANN001
        return ""

    def mixed(x: int | str) -> str:
        return ""

    def star(*xs: int) -> str:
        return ""

    for function in (untyped, mixed, star):
        with pytest.raises(SchemaError):
            parameters_schema(function)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({}, "'query' is required"),
        ({"query": 3}, "'query' must be a string, not an integer"),
        ({"query": "x", "limit": "5"}, "'limit' must be an integer, not a string"),
        ({"query": "x", "limit": True}, "'limit' must be an integer, not a boolean"),
        ({"query": "x", "limit": 2.5}, "'limit' must be an integer, not a number"),
        ({"query": "x", "mode": "slow"}, "'mode' must be one of 'fast', 'deep'"),
        ({"query": "x", "tags": ["a", 1]}, "'tags[1]' must be a string, not an integer"),
        ({"query": "x", "colour": "red"}, "unknown argument 'colour'"),
    ],
)
def test_arguments_that_break_the_schema_are_explained_in_one_line(arguments: dict[str, object], message: str) -> None:
    with pytest.raises(SchemaViolation, match=message.replace("[", r"\[").replace("]", r"\]")):
        validate(parameters_schema(search), arguments)


def test_unknown_keywords_of_foreign_schemas_are_ignored_not_refused() -> None:
    schema = {"type": "object", "properties": {"x": {"$ref": "#/$defs/X", "format": "weird"}},
              "$defs": {"X": {"type": "string"}}, "if": {}, "then": {}}
    validate(schema, {"x": 42})
    validate({"type": "object", "properties": {"n": {"type": ["integer", "null"], "minimum": 1}}}, {"n": None})
    with pytest.raises(SchemaViolation, match="at least 1"):
        validate({"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}}, {"n": 0})


async def test_a_registry_validates_fills_defaults_and_sends_non_text_results_as_json() -> None:
    registry = ToolRegistry([BuiltinTool.from_function(search)])
    out = json.loads(await registry.invoke(ToolCall("c1", "search", {"query": "holiday", "limit": 2.0})))
    assert out == {"query": "holiday", "limit": 2, "ratio": 0.5, "exact": False, "mode": "fast", "tags": None,
                   "lang": "en"}
    with pytest.raises(ToolCallFailed) as failed:
        await registry.invoke(ToolCall("c2", "search", {"limit": 1}))
    assert failed.value.failure is ToolFailure.INVALID_ARGUMENTS
    assert failed.value.detail == "'query' is required"
    with pytest.raises(ToolCallFailed) as unknown:
        await registry.invoke(ToolCall("c3", "nope", {}))
    assert unknown.value.failure is ToolFailure.UNKNOWN_TOOL


def test_tools_are_declared_once_by_name() -> None:
    registry = ToolRegistry()

    @registry.tool(description="Say hello.")
    async def hello(name: str) -> str:
        return f"hello {name}"

    assert registry.names == ["hello"]
    assert registry.specs(["hello", "hello", "missing"])[0].description == "Say hello."
    with pytest.raises(ValueError, match="already registered"):
        registry.add(BuiltinTool.from_function(hello))


async def call(name: str, **arguments: object) -> str:
    return await builtin_tools().invoke(ToolCall("c", name, arguments))


async def test_current_time_answers_in_the_timezone_asked_and_refuses_an_unknown_one() -> None:
    paris = json.loads(await call("current_time", timezone="Asia/Tokyo"))
    assert paris["timezone"] == "Asia/Tokyo"
    assert paris["datetime"].endswith("+09:00")
    assert json.loads(await call("current_time"))["timezone"] == "UTC"
    with pytest.raises(ToolCallFailed) as failed:
        await call("current_time", timezone="Mars/Olympus")
    assert failed.value.failure is ToolFailure.INVALID_ARGUMENTS
    assert "unknown timezone" in failed.value.detail


@pytest.mark.parametrize(
    ("expression", "result"),
    [
        ("1 + 2 * 3", "7"),
        ("(1250 * 0.2) + sqrt(16)", "254"),
        ("0.1 + 0.2", "0.3"),
        ("2 ** 100", "1267650600228229401496703205376"),
        ("2^10", "1024"),
        ("7 // 2 + 7 % 2", "4"),
        ("-(3) + +4", "1"),
        ("round(pi, 3)", "3.142"),
        ("max(1, 5, 3) - min(4, 2)", "3"),
        ("10 / 4", "2.5"),
    ],
)
async def test_the_calculator_computes_arithmetic(expression: str, result: str) -> None:
    assert json.loads(await call("calculator", expression=expression)) == {"expression": expression, "result": result}


@pytest.mark.parametrize(
    ("expression", "reason"),
    [
        ("__import__('os').system('id')", "unknown function"),
        ("().__class__", "not allowed"),
        ("x + 1", "unknown name 'x'"),
        ("'a' * 3", "is not a number"),
        ("True + 1", "is not a number"),
        ("[1, 2]", "not allowed"),
        ("lambda: 1", "not allowed"),
        ("1 if 2 else 3", "not allowed"),
        ("1 < 2", "not allowed"),
        ("9 ** 9 ** 9", "exponents are limited"),
        ("99999999 ** 999", "too large"),
        ("10.0 ** 400", "too large"),
        ("exp(1000)", "too large"),
        ("1 / 0", "division by zero"),
        ("(-8) ** 0.5", "not a real number"),
        ("sqrt(-1)", "not defined"),
        ("(" * 300 + "1" + ")" * 300, "longer than"),
        ("(" * 240 + "1" + ")" * 240, "not valid arithmetic"),
        ("1+" * 150 + "1", "more than"),
        ("", "empty"),
        ("2 +", "not valid arithmetic"),
    ],
)
async def test_the_calculator_refuses_anything_but_bounded_arithmetic(expression: str, reason: str) -> None:
    with pytest.raises(ToolCallFailed) as failed:
        await call("calculator", expression=expression)
    assert failed.value.failure is ToolFailure.INVALID_ARGUMENTS
    assert reason in failed.value.detail


def test_the_built_in_tools_are_current_time_and_calculator() -> None:
    specs = builtin_tools().specs(["current_time", "calculator"])
    assert [s.name for s in specs] == ["current_time", "calculator"]
    assert specs[1].parameters["required"] == ["expression"]


def test_a_built_in_declared_sequential_says_so_in_its_spec_and_others_do_not() -> None:
    registry = ToolRegistry()

    @registry.tool(sequential=True)
    def book_room(room: str) -> str:
        """Book a room."""
        return f"booked {room}"

    @registry.tool()
    def find_room(size: int) -> str:
        """Find a room."""
        return "room 1"

    assert [(s.name, s.sequential) for s in registry.specs(["book_room", "find_room"])] == [
        ("book_room", True), ("find_room", False),
    ]
