from typing import Any

import pytest
from openai.types.chat import ChatCompletionChunk

from application.errors import ModelError
from domain.tools import ToolCall
from infrastructure.models.openai_stream import ChunkReader
from infrastructure.models.provider_config import FREE, TokenPrice
from infrastructure.models.tool_names import ToolNames


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any) -> ChatCompletionChunk:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    payload = {"id": "x", "object": "chat.completion.chunk", "created": 0, "model": "m", "choices": choices}
    return ChatCompletionChunk.construct(**(payload | extra))  # unvalidated, as the SDK builds them


def reader(price: TokenPrice = FREE) -> ChunkReader:
    return ChunkReader(ToolNames(["t"]), price)


def test_content_deltas_are_returned_as_text() -> None:
    read = reader()
    assert [read.feed(chunk({"role": "assistant", "content": ""})), read.feed(chunk({"content": "Hi"}))] == ["", "Hi"]


def test_tool_calls_and_usage_come_at_the_end() -> None:
    read = reader(TokenPrice(1.0, 2.0))
    read.feed(
        chunk(
            {"tool_calls": [{"index": 0, "id": "c1", "type": "function", "function": {"name": "t", "arguments": ""}}]}
        )
    )
    read.feed(chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"a": 1}'}}]}))
    read.feed(chunk({}, "tool_calls"))
    read.feed(chunk(None, usage={"prompt_tokens": 1_000_000, "completion_tokens": 0, "total_tokens": 1_000_000}))
    calls, usage = read.finish()
    assert calls.tool_calls == (ToolCall("c1", "t", {"a": 1}),)
    assert usage.usage is not None
    assert usage.usage.price == pytest.approx(1.0)


def test_a_reply_without_usage_ends_with_nothing_to_add() -> None:
    read = reader()
    read.feed(chunk({"content": "Hi"}, "stop"))
    assert read.finish() == []


def test_a_chunk_without_choices_is_malformed() -> None:
    for broken in (chunk({"content": "x"}, choices=None), ChatCompletionChunk.construct(id="x", model="m")):
        with pytest.raises(ModelError, match="no choices"):
            reader().feed(broken)


def test_a_chunk_with_a_broken_delta_is_malformed() -> None:
    with pytest.raises(ModelError, match="malformed chunk"):
        reader().feed(ChatCompletionChunk.construct(choices=[{"delta": None}], usage=None))


def test_a_stream_that_stops_before_a_finish_reason_is_an_error() -> None:
    read = reader()
    read.feed(chunk({"content": "Half"}))
    with pytest.raises(ModelError, match="ended before the reply was finished"):
        read.finish()
