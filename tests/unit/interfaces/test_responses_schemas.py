"""The Responses API's body read as a chat completion's: input items, instructions, text.format,
and what is refused with the parameter named."""

import pytest

from application.errors import UnsupportedParameter
from domain.chat_completions import CompletionMessage, CompletionRole
from domain.structured_output import OutputFormat, OutputKind
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
    ({"tools": [{"type": "function", "name": "f"}]}, "tools"), ({"tool_choice": "required"}, "tool_choice"),
])
def test_what_cannot_be_honoured_is_refused_naming_it(given: dict[str, object], param: str) -> None:
    with pytest.raises(UnsupportedParameter) as refused:
        ResponsesBody.model_validate({"model": "m", "input": "x"} | given).check_supported()
    assert refused.value.param == param


def test_a_tool_output_item_is_refused_naming_where_it_is() -> None:
    body = ResponsesBody(model="m", input=[{"type": "function_call_output", "call_id": "c", "output": "1"}])
    with pytest.raises(UnsupportedParameter) as refused:
        body.completion_messages()
    assert refused.value.param == "input[0].type"
