"""Tools: spec validation, the retry policy and what a model sees of a failure."""

from __future__ import annotations

import pytest

from domain.errors import DomainError
from domain.tools.calls import RetryPolicy, ToolCall, ToolFailure, ToolResult, ToolSpec, failure_result

CALL = ToolCall(id="call-7", name="get_weather", arguments={"city": "Paris"})

TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "/srv/tools/weather.py", line 12, in get_weather\n'
    "    raise KeyError(city)\n"
    "KeyError: 'Paris'\n"
)


@pytest.mark.parametrize("name", ["get_weather", "search-docs", "mcp.files.read", "t", "Tool2"])
def test_tool_names_of_letters_digits_underscores_dashes_and_dots_are_accepted(name: str) -> None:
    assert ToolSpec(name, "does things").name == name


@pytest.mark.parametrize("name", ["", "get weather", "a/b", "x;y", "tool()", "name\n", "a:b"])
def test_tool_names_with_other_characters_are_rejected(name: str) -> None:
    with pytest.raises(DomainError, match="tool name"):
        ToolSpec(name, "does things")


def test_tool_parameters_default_to_an_empty_object_schema() -> None:
    assert ToolSpec("now", "the time").parameters == {"type": "object"}


@pytest.mark.parametrize(
    "schema", [{}, {"type": "string"}, {"type": "array", "items": {}}, {"properties": {}}]
)
def test_tool_parameters_must_be_an_object_schema(schema: dict[str, object]) -> None:
    with pytest.raises(DomainError, match="JSON Schema object"):
        ToolSpec("t", "does things", schema)


def test_a_result_with_a_failure_is_an_error_and_one_without_is_not() -> None:
    assert not ToolResult("c", "t", "fine").is_error
    assert ToolResult("c", "t", "bad", ToolFailure.FAILED).is_error


@pytest.mark.parametrize(("attempt", "retries"), [(1, True), (2, True), (3, False), (4, False)])
def test_timeouts_are_retried_exactly_twice(attempt: int, retries: bool) -> None:
    assert RetryPolicy().should_retry(ToolFailure.TIMEOUT, attempt) is retries


def test_retries_are_one_second_apart_by_default() -> None:
    assert RetryPolicy().retry_delay == 1.0


@pytest.mark.parametrize("failure", [f for f in ToolFailure if f is not ToolFailure.TIMEOUT])
@pytest.mark.parametrize("attempt", [1, 2])
def test_only_timeouts_are_retried(failure: ToolFailure, attempt: int) -> None:
    assert not RetryPolicy().should_retry(failure, attempt)


def test_permission_denied_and_invalid_arguments_are_never_retried() -> None:
    policy = RetryPolicy(timeout_retries=10)
    for attempt in range(1, 12):
        assert not policy.should_retry(ToolFailure.PERMISSION_DENIED, attempt)
        assert not policy.should_retry(ToolFailure.INVALID_ARGUMENTS, attempt)


@pytest.mark.parametrize("failure", list(ToolFailure))
def test_failure_result_answers_the_call_and_names_the_tool(failure: ToolFailure) -> None:
    result = failure_result(CALL, failure, "something went wrong")
    assert (result.call_id, result.name, result.failure) == ("call-7", "get_weather", failure)
    assert result.is_error
    assert "get_weather" in result.output


@pytest.mark.parametrize("failure", [ToolFailure.TIMEOUT, ToolFailure.UNAVAILABLE])
def test_timeout_and_unavailable_read_as_temporarily_unavailable(failure: ToolFailure) -> None:
    output = failure_result(CALL, failure, "no answer within 30 s").output
    assert "temporarily unavailable" in output


def test_invalid_arguments_tell_the_model_what_to_fix() -> None:
    output = failure_result(CALL, ToolFailure.INVALID_ARGUMENTS, "city must be a string").output
    assert "city must be a string" in output
    assert "invalid" in output


def test_permission_denied_tells_the_model_not_to_try_again() -> None:
    output = failure_result(CALL, ToolFailure.PERMISSION_DENIED).output
    assert "denied" in output.lower()


def test_unknown_tool_tells_the_model_there_is_no_such_tool() -> None:
    output = failure_result(ToolCall("c", "teleport"), ToolFailure.UNKNOWN_TOOL).output
    assert "teleport" in output
    assert "no tool" in output.lower()


def test_failure_without_detail_still_reads_as_a_sentence() -> None:
    output = failure_result(CALL, ToolFailure.FAILED).output
    assert output.startswith("Tool 'get_weather' failed")
    assert "unexpected error" in output


@pytest.mark.parametrize("failure", [ToolFailure.INVALID_ARGUMENTS, ToolFailure.FAILED])
def test_only_the_first_line_of_the_detail_reaches_the_model(failure: ToolFailure) -> None:
    output = failure_result(CALL, failure, "  city is required\nat line 3\nsecret internals").output
    assert "city is required" in output
    assert "line 3" not in output
    assert "secret internals" not in output
    assert "\n" not in output


@pytest.mark.parametrize("failure", list(ToolFailure))
def test_failure_text_has_a_bounded_length(failure: ToolFailure) -> None:
    output = failure_result(CALL, failure, "x" * 100_000).output
    assert len(output) <= 500


@pytest.mark.parametrize("failure", list(ToolFailure))
def test_failure_text_never_shows_a_stack_trace(failure: ToolFailure) -> None:
    output = failure_result(CALL, failure, TRACEBACK).output
    assert "Traceback" not in output
    assert 'File "' not in output
    assert "get_weather" in output
