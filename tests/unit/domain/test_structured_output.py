"""Structured output's rules: when an answer is checked, what a model without native support is
told, and how an answer is read as JSON."""

import pytest

from domain.conversations.structured_output import OutputFormat, OutputKind, parsed_answer
from domain.errors import DomainError

PERSON = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def test_an_answer_is_checked_when_strict_or_when_the_model_had_only_instructions() -> None:
    loose = OutputFormat(OutputKind.JSON_SCHEMA, PERSON)
    strict = OutputFormat(OutputKind.JSON_SCHEMA, PERSON, strict=True)
    assert (loose.checked(native=True), loose.checked(native=False)) == (False, True)
    assert (strict.checked(native=True), strict.checked(native=False)) == (True, True)


def test_the_instructions_name_the_format_and_carry_the_schema() -> None:
    told = OutputFormat(OutputKind.JSON_SCHEMA, PERSON, name="person").instructions()
    assert "'person'" in told
    assert '"required": ["name"]' in told
    assert "JSON object" in OutputFormat(OutputKind.JSON_OBJECT).instructions()


def test_a_repair_request_says_what_was_wrong_and_asks_again() -> None:
    request = OutputFormat(OutputKind.JSON_OBJECT).repair_request("it is not JSON")
    assert request.startswith("That answer is not valid: it is not JSON.")


def test_a_schema_format_needs_its_schema_and_a_short_name() -> None:
    with pytest.raises(DomainError, match="schema"):
        OutputFormat(OutputKind.JSON_SCHEMA)
    with pytest.raises(DomainError, match="name"):
        OutputFormat(OutputKind.JSON_OBJECT, name="x" * 65)
    with pytest.raises(DomainError, match="name"):
        OutputFormat(OutputKind.JSON_OBJECT, name="a person")  # OpenAI refuses it: 400 here, not its 400 later


@pytest.mark.parametrize(
    ("text", "value"),
    [('{"name": "Ada"}', {"name": "Ada"}), ('```json\n{"name": "Ada"}\n```', {"name": "Ada"}), ("  [1, 2] ", [1, 2])],
)
def test_an_answer_is_read_as_json_through_a_code_fence(text: str, value: object) -> None:
    assert parsed_answer(text) == (value, None)


def test_an_answer_that_is_not_json_says_where_it_broke() -> None:
    value, problem = parsed_answer("Sure! Here it is: {")
    assert value is None
    assert problem is not None
    assert problem.startswith("it is not JSON (Expecting value at character 0")


def test_an_answer_nested_too_deep_is_a_problem_named_not_an_error() -> None:
    assert parsed_answer("[" * 100_000) == (None, "it is JSON nested too deep")
