"""The Responses API's body read as a chat completion's: input items, instructions, text.format,
and what is refused with the parameter named."""

import pytest

from application.errors import InvalidParameter, UnsupportedParameter
from domain.conversations.chat_completions import CompletionMessage, CompletionRole
from domain.conversations.structured_output import OutputFormat, OutputKind
from domain.tools.client_tools import ChoiceMode, ClientCall, ToolChoice
from interfaces.http.responses_schemas import ResponsesBody

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}}


def test_a_string_input_is_one_user_message_after_the_instructions() -> None:
    body = ResponsesBody(model="m", input="Hi", instructions="Be brief.")
    assert body.completion_messages() == (
        CompletionMessage(CompletionRole.SYSTEM, "Be brief."), CompletionMessage(CompletionRole.USER, "Hi"),
    )


def test_items_keep_their_roles_texts_and_images() -> None:
    body = ResponsesBody(model="m", input=[
        {"role": "user", "content": "Hello"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Hi!"}]},
        {"role": "user", "content": [{"type": "input_text", "text": "Look:"},
                                     {"type": "input_image", "image_url": "https://example.com/a.png"}]},
    ])
    assert body.completion_messages()[1:] == (
        CompletionMessage(CompletionRole.ASSISTANT, "Hi!"),
        CompletionMessage(CompletionRole.USER, "Look:", ("https://example.com/a.png",)),
    )


def test_text_format_is_the_structured_output_flattened() -> None:
    body = ResponsesBody(model="m", input="x", text={"format": {"type": "json_schema", "name": "city",
                                                                 "schema": SCHEMA, "strict": True}})
    assert body.output() == OutputFormat(OutputKind.JSON_SCHEMA, SCHEMA, "city", strict=True)
    assert ResponsesBody(model="m", input="x", text={"format": {"type": "text"}}).output() is None


@pytest.mark.parametrize(("given", "param"), [
    ({"store": False}, "store"), ({"background": True}, "background"), ({"conversation": "c1"}, "conversation"),
])
def test_what_cannot_be_honoured_is_refused_naming_it(given: dict[str, object], param: str) -> None:
    with pytest.raises(UnsupportedParameter) as refused:
        ResponsesBody.model_validate({"model": "m", "input": "x"} | given).check_supported()
    assert refused.value.param == param


def test_function_calls_join_into_one_assistant_message_and_outputs_answer_them() -> None:
    body = ResponsesBody(model="m", input=[
        {"role": "user", "content": "Two cities?"},
        {"type": "function_call", "call_id": "c1", "name": "w", "arguments": "{}"},
        {"type": "function_call", "call_id": "c2", "name": "w", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "sun"},
        {"type": "function_call_output", "call_id": "c2", "output": [{"type": "input_text", "text": "rain"}]},
    ])
    assert body.completion_messages()[1:] == (
        CompletionMessage(CompletionRole.ASSISTANT, calls=(ClientCall("c1", "w", "{}"), ClientCall("c2", "w", "{}"))),
        CompletionMessage(CompletionRole.TOOL, "sun", call_id="c1"),
        CompletionMessage(CompletionRole.TOOL, "rain", call_id="c2"),
    )


@pytest.mark.parametrize(("tools", "choice", "error", "param"), [
    ([{"type": "web_search"}], None, UnsupportedParameter, "tools[0]"),
    ([{"type": "function", "name": "has space"}], None, InvalidParameter, "tools[0]"),
    ([{"type": "function", "name": "f"}], {"type": "function", "name": "g"}, InvalidParameter, "tool_choice"),
    (None, "required", InvalidParameter, "tool_choice"),
])
def test_bad_tools_are_refused_naming_them(tools: object, choice: object, error: type[Exception], param: str) -> None:
    body = ResponsesBody.model_validate({"model": "m", "input": "x", "tools": tools, "tool_choice": choice})
    with pytest.raises(error) as refused:
        body.client_tools()
    assert refused.value.param == param  # type: ignore[attr-defined]


def test_function_tools_and_a_named_choice_are_the_client_tools() -> None:
    body = ResponsesBody(model="m", input="x", tools=[{"type": "function", "name": "f", "description": "d"}],
                         tool_choice={"type": "function", "name": "f"})
    tools = body.client_tools()
    assert tools is not None
    assert ([s.name for s in tools.specs], tools.choice) == (["f"], ToolChoice(ChoiceMode.NAMED, "f"))
