"""The body of `POST /v1/chat/completions`, as OpenAI's API defines it, read into memagent's terms.

Parameters stock clients send and memagent has no use for (penalties, seed, `stop`, `store`…) are
accepted and ignored (`parallel_tool_calls` too: the model may always call several tools). Those
whose meaning memagent cannot honour are refused with 400 `unsupported_parameter` naming them, never
silently ignored: `n` > 1 and `logprobs`/`top_logprobs`. `tools` and `tool_choice` are the
client's own tools (domain.tools.client_tools): assistant `tool_calls` and `tool` messages in the history
are their calls and results. The legacy `functions` and `function_call` are read as the same, one
call per step: an assistant's `function_call` and the `function` message after it.
`response_format` (`text`, `json_object`, `json_schema`) is the turn's structured output
(domain.conversations.structured_output).
"""

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from application.errors import InvalidParameter, UnsupportedParameter
from domain.agents.config import ModelParams
from domain.conversations.chat_completions import CompletionMessage, CompletionRole
from domain.conversations.structured_output import OutputFormat, OutputKind
from domain.errors import DomainError
from domain.text import text_problem
from domain.tools.client_tools import ClientCall, ClientTools
from interfaces.http.openai_tools import client_call, client_tools, legacy_tools

ROLES = {role.value: role for role in CompletionRole}
MAX_CONVERSATION_ID = 64


class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="allow")

    include_usage: bool = False


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")

    role: str
    content: str | list[dict[str, Any]] | None = None
    tool_calls: list[dict[str, Any]] | None = None
    tool_call_id: str | None = Field(None, max_length=256)
    function_call: dict[str, Any] | None = None  # legacy: an assistant's one call


class CompletionBody(BaseModel):
    model_config = ConfigDict(extra="allow")

    model: str = Field(min_length=1, max_length=300)
    messages: list[ChatMessage] = Field(min_length=1, max_length=1000)
    stream: bool = False
    stream_options: StreamOptions | None = None
    temperature: float | None = Field(None, ge=0, le=2)
    top_p: float | None = Field(None, ge=0, le=1)
    max_tokens: int | None = Field(None, ge=1, le=1_000_000)
    max_completion_tokens: int | None = Field(None, ge=1, le=1_000_000)
    user: str | None = Field(None, min_length=1, max_length=256)
    metadata: dict[str, Any] | None = None
    n: int | None = None
    logprobs: bool | None = None
    top_logprobs: int | None = None
    response_format: dict[str, Any] | None = None
    tools: list[Any] | None = None
    tool_choice: Any = None
    functions: list[Any] | None = None
    function_call: Any = None

    def check_supported(self) -> None:
        if self.n is not None and self.n != 1:
            raise UnsupportedParameter("`n` must be 1: memagent answers one choice per turn.", "n")
        if self.logprobs or self.top_logprobs:
            param = "logprobs" if self.logprobs else "top_logprobs"
            raise UnsupportedParameter("Log probabilities are not available through memagent.", param)
        if self.functions and self.tools:
            raise InvalidParameter("Offer functions as `tools` or as the legacy `functions`, not both.", "functions")

    @property
    def legacy(self) -> bool:
        """Whether the client uses the legacy `functions` API (answered with `function_call`)."""
        return bool(self.functions)

    def client_tools(self) -> ClientTools | None:
        if not self.functions:
            if self.function_call is not None:
                raise InvalidParameter("`function_call` needs `functions`.", "function_call")
            return client_tools(self.tools, self.tool_choice, nested=True)
        return legacy_tools(self.functions, self.function_call)

    def output(self) -> OutputFormat | None:
        """`response_format` as the turn's structured output; None for text."""
        return output_format(self.response_format)

    def params(self) -> ModelParams | None:
        max_tokens = self.max_completion_tokens or self.max_tokens
        if self.temperature is None and self.top_p is None and max_tokens is None:
            return None
        return ModelParams(self.temperature, max_tokens, self.top_p)

    def conversation(self) -> str | None:
        return named_conversation(self.metadata)

    def completion_messages(self) -> tuple[CompletionMessage, ...]:
        return tuple(_message(index, message) for index, message in enumerate(self.messages))


def named_conversation(metadata: dict[str, Any] | None) -> str | None:
    """`metadata.conversation_id`, the conversation a client names (None: it names none)."""
    named = (metadata or {}).get("conversation_id")
    if named is None or named == "":
        return None
    if not isinstance(named, str) or len(named) > MAX_CONVERSATION_ID or text_problem(named):
        raise InvalidParameter(f"metadata.conversation_id must be a conversation id of 1 to "
                               f"{MAX_CONVERSATION_ID} characters.", "metadata.conversation_id")
    return named


def output_format(given: dict[str, Any] | None) -> OutputFormat | None:
    """OpenAI's `response_format` (`text`, `json_object`, or `json_schema` with its `json_schema`
    object) read; a malformed one is 400 naming it."""
    kind = (given or {}).get("type", "text")
    if kind == "text":
        return None
    if kind == OutputKind.JSON_OBJECT:
        return OutputFormat(OutputKind.JSON_OBJECT)
    if kind != OutputKind.JSON_SCHEMA:
        raise UnsupportedParameter(f"`response_format` {kind!r} is not supported: text, json_object or "
                                   "json_schema.", "response_format")
    spec = (given or {}).get("json_schema")
    if not isinstance(spec, dict) or not isinstance(spec.get("schema"), dict) or not spec["schema"]:
        raise InvalidParameter("response_format.json_schema needs a `schema` object.", "response_format")
    name, strict = spec.get("name", "answer"), spec.get("strict") or False
    if not isinstance(name, str) or not isinstance(strict, bool):
        raise InvalidParameter("response_format.json_schema: `name` is a string and `strict` a boolean.",
                               "response_format")
    try:
        return OutputFormat(OutputKind.JSON_SCHEMA, spec["schema"], name, strict)
    except DomainError as bad:
        raise InvalidParameter(f"response_format.json_schema: {bad}.", "response_format") from bad


def _message(index: int, message: ChatMessage) -> CompletionMessage:
    where = f"messages[{index}]"
    role = ROLES.get(message.role)
    if message.role == "function":
        role = CompletionRole.TOOL  # legacy: the result of the `function_call` before it
    if role is None:
        raise UnsupportedParameter(f"{where}: the role {message.role!r} is not one of OpenAI's.", f"{where}.role")
    calls = _call_ids(where, message)
    if message.role == "tool" and not message.tool_call_id:
        raise InvalidParameter(f"{where}: a tool message names the call it answers (`tool_call_id`).", where)
    if message.content is None or isinstance(message.content, str):
        return CompletionMessage(role, message.content or "", calls=calls, call_id=message.tool_call_id or "")
    texts, images = [], []
    for part in message.content:
        kind = part.get("type")
        if kind == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif kind == "image_url" and isinstance(url := (part.get("image_url") or {}).get("url"), str):
            images.append(url)
        else:
            raise UnsupportedParameter(f"{where}: a content part of type {kind!r} is not supported "
                                       "(text and image_url are).", f"{where}.content")
    return CompletionMessage(role, "\n".join(texts), tuple(images), calls, message.tool_call_id or "")


def _call_ids(where: str, message: ChatMessage) -> tuple[ClientCall, ...]:
    """An assistant message's `tool_calls`: each with its id, function name and arguments; a legacy
    `function_call` has no id."""
    if message.function_call is not None and not message.tool_calls:
        return (client_call("", message.function_call.get("name"), message.function_call.get("arguments")),)
    calls = []
    for call in message.tool_calls or ():
        function = call.get("function") if isinstance(call, dict) else None
        call_id = call.get("id") if isinstance(call, dict) else None
        if not isinstance(call_id, str) or not call_id or not isinstance(function, dict):
            raise InvalidParameter(f"{where}.tool_calls: each call is an object with its `id` and `function`.",
                                   f"{where}.tool_calls")
        calls.append(client_call(call_id, function.get("name"), function.get("arguments")))
    return tuple(calls)


def completion_data(
    message_id: str, model: str, created: int, answer: str | None, finish_reason: str | None, usage: dict[str, int]
) -> dict[str, Any]:
    return {
        "id": message_id, "object": "chat.completion", "created": created, "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": answer, "refusal": None},
                     "finish_reason": finish_reason, "logprobs": None}],
        "usage": usage,
    }


def chunk_data(
    message_id: str, model: str, created: int, delta: dict[str, Any], finish_reason: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    return {
        "id": message_id, "object": "chat.completion.chunk", "created": created, "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}], **extra,
    }

