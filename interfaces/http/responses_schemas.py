"""The body of `POST /v1/responses`, OpenAI's Responses API, read into the terms of a chat completion.

`input` (a string, or items: messages with `input_text`/`output_text`/`input_image` parts) becomes
the completion's messages, `instructions` a system message before them, `text.format` the turn's
structured output, `max_output_tokens` its `max_tokens`. `previous_response_id` names the message
whose conversation the turn continues. Parameters stock clients send and memagent has no use for
(`truncation`, `parallel_tool_calls`, `include`, `reasoning`, `service_tier`…) are accepted and
ignored; those memagent cannot honour are 400 `unsupported_parameter` naming them: `store: false`
(memagent keeps every turn: it is what its memory is), `background`, `conversation` (name the
conversation with `metadata.conversation_id` or the `X-Memagent-Conversation-Id` header), and tools
of any type but `function`. `tools` of type `function` and `tool_choice` are the client's own tools
(domain.tools.client_tools): `function_call` items are their calls, `function_call_output` items their
results, which resume the turn that paused for them.
"""

from dataclasses import replace
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from application.errors import InvalidParameter, UnsupportedParameter
from domain.agents.config import ModelParams
from domain.conversations.chat_completions import CompletionMessage, CompletionRole
from domain.conversations.structured_output import OutputFormat
from domain.tools.client_tools import ClientTools
from interfaces.http.openai_schemas import named_conversation, output_format
from interfaces.http.openai_tools import client_call, client_tools

ROLES = {role.value: role for role in CompletionRole if role is not CompletionRole.TOOL}
TEXT_PARTS = ("input_text", "output_text", "text")
NOT_STORED = ("memagent stores every turn (its conversations are its memory): `store` must be true or left out.")


class TextOptions(BaseModel):
    model_config = ConfigDict(extra="allow")

    format: dict[str, Any] | None = None


class ResponsesBody(BaseModel):
    model_config = ConfigDict(extra="allow")

    model: str = Field(min_length=1, max_length=300)
    input: str | list[dict[str, Any]] = Field(min_length=1)
    instructions: str | None = Field(None, max_length=100_000)
    previous_response_id: str | None = Field(None, min_length=1, max_length=64)
    stream: bool = False
    store: bool | None = None
    temperature: float | None = Field(None, ge=0, le=2)
    top_p: float | None = Field(None, ge=0, le=1)
    max_output_tokens: int | None = Field(None, ge=1, le=1_000_000)
    user: str | None = Field(None, min_length=1, max_length=256)
    metadata: dict[str, Any] | None = None
    text: TextOptions | None = None
    tools: list[Any] | None = None
    tool_choice: str | dict[str, Any] | None = None
    background: bool | None = None
    top_logprobs: int | None = None
    conversation: str | dict[str, Any] | None = None

    def check_supported(self) -> None:
        if self.store is False:
            raise UnsupportedParameter(NOT_STORED, "store")
        if self.top_logprobs:
            raise UnsupportedParameter("Log probabilities are not available through memagent.", "top_logprobs")
        if self.background:
            raise UnsupportedParameter("Background responses are not offered: stream, or poll "
                                       "GET /v1/responses/{id} while the answer is made.", "background")
        if self.conversation is not None:
            raise UnsupportedParameter("Name the conversation with `metadata.conversation_id` or the "
                                       "X-Memagent-Conversation-Id header, or use `previous_response_id`.",
                                       "conversation")

    def client_tools(self) -> ClientTools | None:
        return client_tools(self.tools, self.tool_choice, nested=False)

    def output(self) -> OutputFormat | None:
        return output_format(_format_as_response_format(self.text.format if self.text else None))

    def params(self) -> ModelParams | None:
        if self.temperature is None and self.top_p is None and self.max_output_tokens is None:
            return None
        return ModelParams(self.temperature, self.max_output_tokens, self.top_p)

    def conversation_id(self) -> str | None:
        return named_conversation(self.metadata)

    def completion_messages(self) -> tuple[CompletionMessage, ...]:
        given = [CompletionMessage(CompletionRole.USER, self.input)] if isinstance(self.input, str) else [
            _item(index, item) for index, item in enumerate(self.input)
        ]
        system = [CompletionMessage(CompletionRole.SYSTEM, self.instructions)] if self.instructions else []
        return (*system, *_calls_joined(given))


def _calls_joined(messages: list[CompletionMessage]) -> list[CompletionMessage]:
    """Consecutive `function_call` items as one assistant message with all their calls, as Chat
    Completions has them."""
    joined: list[CompletionMessage] = []
    for message in messages:
        last = joined[-1] if joined else None
        if message.calls and last is not None and last.calls:
            joined[-1] = replace(last, calls=(*last.calls, *message.calls))
        else:
            joined.append(message)
    return joined


def _format_as_response_format(given: dict[str, Any] | None) -> dict[str, Any] | None:
    """`text.format` is `response_format` flattened: `{type: json_schema, name, schema, strict}`."""
    if given is None or given.get("type") != "json_schema":
        return given
    return {"type": "json_schema", "json_schema": {k: v for k, v in given.items() if k != "type"}}


def _item(index: int, item: dict[str, Any]) -> CompletionMessage:
    where = f"input[{index}]"
    kind = item.get("type", "message")
    if kind in ("function_call", "function_call_output"):
        return _tool_item(where, kind, item)
    role = ROLES.get(str(item.get("role")))
    if kind != "message" or role is None:
        raise UnsupportedParameter(f"{where}: an item of type {kind!r} and role {item.get('role')!r} is not "
                                   "supported (messages of user, assistant, system or developer are).", where)
    content = item.get("content")
    if isinstance(content, str):
        return CompletionMessage(role, content)
    if not isinstance(content, list):
        raise InvalidParameter(f"{where}.content must be a string or a list of parts.", f"{where}.content")
    texts, images = [], []
    for part in content:
        part_kind = part.get("type") if isinstance(part, dict) else None
        if part_kind in TEXT_PARTS and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif part_kind == "input_image" and isinstance(part.get("image_url"), str):
            images.append(part["image_url"])
        else:
            raise UnsupportedParameter(f"{where}: a content part of type {part_kind!r} is not supported "
                                       "(input_text, output_text and input_image with an image_url are).",
                                       f"{where}.content")
    return CompletionMessage(role, "\n".join(texts), tuple(images))


def _tool_item(where: str, kind: str, item: dict[str, Any]) -> CompletionMessage:
    """A `function_call` (the model's call, an assistant message) or its `function_call_output`."""
    call_id = item.get("call_id")
    if not isinstance(call_id, str) or not call_id:
        raise InvalidParameter(f"{where}: a {kind} item names its `call_id`.", f"{where}.call_id")
    if kind == "function_call":
        call = client_call(call_id, item.get("name"), item.get("arguments"))
        return CompletionMessage(CompletionRole.ASSISTANT, calls=(call,))
    output = item.get("output")
    if isinstance(output, list):
        output = "\n".join(str(part.get("text", "")) for part in output if isinstance(part, dict))
    if not isinstance(output, str):
        raise InvalidParameter(f"{where}.output must be a string or a list of text parts.", f"{where}.output")
    return CompletionMessage(CompletionRole.TOOL, output, call_id=call_id)
