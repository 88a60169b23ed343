"""ReAct: a fenced ```json {"name", "args"}``` block becomes a ToolCall; anything else is an answer."""

from __future__ import annotations

import json

import pytest

from domain.tools.calls import ToolCall, ToolSpec
from domain.tools.react import parse_react_output, react_instructions

FENCE = "```"


def fenced(payload: str, tag: str = "json") -> str:
    return f"{FENCE}{tag}\n{payload}\n{FENCE}"


def test_fenced_json_block_becomes_a_tool_call_with_the_thought_before_it() -> None:
    block = fenced('{"name": "get_weather", "args": {"city": "Paris"}}')
    text = "I need the weather in Paris first.\n\n" + block
    step = parse_react_output(text, "call-1")
    assert step.call == ToolCall(id="call-1", name="get_weather", arguments={"city": "Paris"})
    assert step.thought == "I need the weather in Paris first."


def test_arguments_key_is_accepted_as_well_as_args() -> None:
    text = "Search it.\n" + fenced('{"name": "search", "arguments": {"q": "memagent", "k": 3}}')
    step = parse_react_output(text, "call-2")
    assert step.call == ToolCall(id="call-2", name="search", arguments={"q": "memagent", "k": 3})


def test_nested_arguments_are_kept_whole() -> None:
    args = {"filter": {"tags": ["a", "b"], "range": {"from": 1, "to": 2}}, "limit": 5}
    text = "Thinking.\n" + fenced(json.dumps({"name": "query", "args": args}))
    step = parse_react_output(text, "c")
    assert step.call is not None
    assert step.call.arguments == args


def test_call_without_arguments_has_empty_arguments() -> None:
    step = parse_react_output(fenced('{"name": "now"}'), "c")
    assert step.call == ToolCall(id="c", name="now", arguments={})
    assert step.thought == ""


def test_text_after_the_block_is_not_part_of_the_thought() -> None:
    text = "Let me check.\n" + fenced('{"name": "t", "args": {}}') + "\nWaiting for the result."
    step = parse_react_output(text, "c")
    assert step.thought == "Let me check."
    assert step.call is not None


def test_compact_single_line_fence_is_parsed() -> None:
    step = parse_react_output('ok ```json {"name": "t", "args": {"x": 1}}```', "c")
    assert step.call == ToolCall(id="c", name="t", arguments={"x": 1})
    assert step.thought == "ok"


@pytest.mark.parametrize(
    "text",
    [
        "The weather in Paris is sunny.",
        '{"name": "get_weather", "args": {"city": "Paris"}}',
        'Call it: {"name": "get_weather", "args": {}}',
        "",
    ],
)
def test_unfenced_text_is_a_plain_answer_with_the_whole_text(text: str) -> None:
    step = parse_react_output(text, "c")
    assert step.call is None
    assert step.thought == text


@pytest.mark.parametrize(
    "payload",
    [
        '{"name": "get_weather", "args": {"city": "Paris"}',
        "{name: get_weather}",
        "{'name': 'get_weather', 'args': {}}",
        '{"name": "t", "args": {},}',
    ],
)
def test_invalid_json_makes_a_plain_answer_with_the_whole_text(payload: str) -> None:
    text = "Thinking.\n" + fenced(payload)
    step = parse_react_output(text, "c")
    assert step.call is None
    assert step.thought == text


@pytest.mark.parametrize(
    "payload",
    [
        '{"args": {"city": "Paris"}}',
        '{"name": "", "args": {}}',
        '{"name": null, "args": {}}',
        '{"name": 42, "args": {}}',
        '{"tool": "get_weather", "args": {}}',
    ],
)
def test_missing_or_empty_name_makes_a_plain_answer_with_the_whole_text(payload: str) -> None:
    text = "Thinking.\n" + fenced(payload)
    step = parse_react_output(text, "c")
    assert step.call is None
    assert step.thought == text


@pytest.mark.parametrize(
    "payload",
    [
        '{"name": "t", "args": ["Paris"]}',
        '{"name": "t", "args": "Paris"}',
        '{"name": "t", "args": null}',
        '{"name": "t", "args": 3}',
        '{"name": "t", "arguments": [1, 2]}',
    ],
)
def test_non_object_arguments_make_a_plain_answer_with_the_whole_text(payload: str) -> None:
    text = "Thinking.\n" + fenced(payload)
    step = parse_react_output(text, "c")
    assert step.call is None
    assert step.thought == text


def test_fenced_json_that_is_not_an_object_is_a_plain_answer() -> None:
    text = "Here:\n" + fenced('["get_weather", {"city": "Paris"}]')
    step = parse_react_output(text, "c")
    assert step.call is None
    assert step.thought == text


TOOLS = [
    ToolSpec(
        "get_weather",
        "Current weather for a city.",
        {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    ),
    ToolSpec("now", "The current date and time."),
    ToolSpec(
        "search.docs",
        "Search the knowledge base.",
        {"type": "object", "properties": {"q": {"type": "string"}, "k": {"type": "integer"}}},
    ),
]


def test_react_instructions_list_every_tools_name_description_and_schema() -> None:
    text = react_instructions(TOOLS)
    for tool in TOOLS:
        assert tool.name in text
        assert tool.description in text
        assert json.dumps(dict(tool.parameters)) in text


def test_react_instructions_schemas_are_valid_json() -> None:
    text = react_instructions(TOOLS)
    marker = "arguments (JSON Schema):"
    schemas = [line.split(marker, 1)[1] for line in text.splitlines() if marker in line]
    assert [json.loads(s) for s in schemas] == [dict(t.parameters) for t in TOOLS]


def test_react_instructions_teach_the_block_that_the_parser_reads() -> None:
    text = react_instructions(TOOLS)
    assert '```json\n{"name": ' in text
    assert '"args"' in text
    reply = "I should check.\n" + fenced('{"name": "get_weather", "args": {"city": "Oslo"}}')
    assert parse_react_output(reply, "c").call == ToolCall("c", "get_weather", {"city": "Oslo"})


def test_a_fenced_block_nested_past_the_parsers_depth_is_text_not_a_failure() -> None:
    deep = "```json\n" + "[" * 100_000 + "]" * 100_000 + "\n```"
    step = parse_react_output(f"Thinking.\n{deep}", call_id="c1")
    assert step.call is None
