import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from application.errors import ModelError
from application.ports.chat_model import ModelChunk
from domain.tools.calls import ToolCall
from infrastructure.models.openai_stream import MAX_LINE_BYTES, ChunkReader, ErrorEvent, sse_chunks, text_lines
from infrastructure.models.provider_config import FREE, TokenPrice
from infrastructure.models.tool_names import ToolNames


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any) -> dict[str, Any]:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    payload = {"id": "x", "object": "chat.completion.chunk", "created": 0, "model": "m", "choices": choices}
    return payload | extra  # as json.loads reads it from the stream


def reader(price: TokenPrice = FREE) -> ChunkReader:
    return ChunkReader(ToolNames(["t"]), price)


def test_content_deltas_are_returned_as_text() -> None:
    read = reader()
    assert [read.feed(chunk({"role": "assistant", "content": ""})), read.feed(chunk({"content": "Hi"}))] == ["", "Hi"]


async def test_tool_calls_and_usage_come_at_the_end() -> None:
    read = reader(TokenPrice(1.0, 2.0))
    read.feed(
        chunk(
            {"tool_calls": [{"index": 0, "id": "c1", "type": "function", "function": {"name": "t", "arguments": ""}}]}
        )
    )
    read.feed(chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"a": 1}'}}]}))
    read.feed(chunk({}, "tool_calls"))
    read.feed(chunk(None, usage={"prompt_tokens": 1_000_000, "completion_tokens": 0, "total_tokens": 1_000_000}))
    calls, usage = await read.finish()
    assert calls.tool_calls == (ToolCall("c1", "t", {"a": 1}),)
    assert usage.usage is not None
    assert usage.usage.price == pytest.approx(1.0)
    assert (calls.finish_reason, usage.finish_reason) == (None, "tool_calls")  # once, on the last chunk


async def test_a_reply_without_usage_ends_with_its_finish_reason_alone() -> None:
    read = reader()
    read.feed(chunk({"content": "Hi"}, "stop"))
    assert await read.finish() == [ModelChunk(finish_reason="stop")]


async def test_the_finish_reason_is_the_first_one_the_stream_gives_and_rides_the_usage() -> None:
    read = reader()
    read.feed(chunk({"content": "It was a dark and"}))
    read.feed(chunk({}, "length"))
    read.feed(chunk({}, "stop"))  # a server that repeats itself: the first word stands
    read.feed(chunk(None, usage={"prompt_tokens": 3, "completion_tokens": 5, "total_tokens": 8}))
    [usage] = await read.finish()
    assert usage.usage is not None
    assert (usage.usage.completion_tokens, usage.finish_reason) == (5, "length")


def test_a_chunk_without_choices_is_malformed() -> None:
    for broken in (chunk({"content": "x"}, choices=None), {"id": "x", "model": "m"}, ["not", "an", "object"]):
        with pytest.raises(ModelError, match="no choices"):
            reader().feed(broken)


def test_a_chunk_with_a_broken_delta_is_malformed() -> None:
    with pytest.raises(ModelError, match="malformed chunk"):
        reader().feed({"choices": [{"delta": {"content": 5}}]})
    with pytest.raises(ModelError, match="malformed chunk"):
        reader().feed({"choices": ["not a choice"]})


async def test_a_stream_that_stops_before_a_finish_reason_is_an_error() -> None:
    read = reader()
    read.feed(chunk({"content": "Half"}))
    with pytest.raises(ModelError, match="ended before the reply was finished"):
        await read.finish()


async def lines_of(*lines: str) -> AsyncIterator[str]:
    for line in lines:
        yield line


async def chunks_of(*lines: str) -> list[Any]:
    return [c async for c in sse_chunks(lines_of(*lines))]


async def test_sse_data_lines_are_read_as_json_until_done() -> None:
    read = await chunks_of(
        ": a comment", 'data: {"a": 1}', "", "event: message", 'data:{"b":', 'data: 2}', "", "data: [DONE]", "",
        'data: {"after": "done"}', "",
    )
    assert read == [{"a": 1}, {"b": 2}]


async def test_the_response_is_read_to_its_end_after_done_so_its_connection_can_be_reused() -> None:
    consumed: list[str] = []

    async def lines() -> AsyncIterator[str]:
        for line in ('data: {"a": 1}', "", "data: [DONE]", "", "", "trailing"):
            consumed.append(line)
            yield line

    assert [c async for c in sse_chunks(lines())] == [{"a": 1}]
    assert consumed[-1] == "trailing"


async def test_a_server_that_breaks_off_or_lingers_after_done_does_not_fail_the_finished_answer() -> None:
    async def broken() -> AsyncIterator[str]:
        for line in ('data: {"a": 1}', "", "data: [DONE]", ""):
            yield line
        raise aiohttp.ClientPayloadError("Response payload is not completed")

    async def lingering() -> AsyncIterator[str]:  # e.g. a proxy that keeps pinging and never ends the body
        for line in ('data: {"a": 1}', "", "data: [DONE]", ""):
            yield line
        while True:
            await asyncio.sleep(0.05)
            yield ": ping"

    for lines in (broken(), lingering()):
        async with asyncio.timeout(10):  # without a bound on the drain this never ends: fail, do not hang
            assert [c async for c in sse_chunks(lines)] == [{"a": 1}]


async def test_data_that_is_not_a_json_object_is_a_malformed_chunk() -> None:
    with pytest.raises(ModelError, match="not a JSON object"):
        await chunks_of("data: null", "")


async def test_an_error_event_in_the_stream_is_an_error_with_the_servers_message() -> None:
    with pytest.raises(ErrorEvent, match="overloaded"):
        await chunks_of('data: {"a": 1}', "", 'data: {"error": {"message": "overloaded", "type": "server_error"}}', "")
    with pytest.raises(ErrorEvent, match="An error occurred during streaming"):
        await chunks_of('data: {"error": "gone"}', "")


async def test_a_transport_failure_mid_stream_comes_through_as_raised() -> None:
    async def dropped() -> AsyncIterator[str]:
        yield 'data: {"a": 1}'
        yield ""
        raise aiohttp.ServerDisconnectedError()

    chunks = sse_chunks(dropped())
    assert await anext(chunks) == {"a": 1}
    with pytest.raises(aiohttp.ServerDisconnectedError):
        await anext(chunks)


async def pieces(*data: bytes) -> AsyncIterator[bytes]:
    for piece in data:
        yield piece


async def lines_from(*data: bytes) -> list[str]:
    return [line async for line in text_lines(pieces(*data))]


async def test_the_body_is_cut_into_lines_wherever_the_pieces_break() -> None:
    read = await lines_from(b'data: {"a"', b': 1}\n\nda', b"ta: [DONE]\n\n")
    assert read == ['data: {"a": 1}', "", "data: [DONE]", ""]


async def test_lines_may_end_in_crlf_or_cr_even_when_a_crlf_is_split_between_pieces() -> None:
    assert await lines_from(b"a\r\n\r\nb\r", b"\nc\rd\r", b"\r\ne") == ["a", "", "b", "c", "d", "", "e"]


async def test_a_character_split_between_pieces_is_decoded_whole_and_a_last_line_is_kept() -> None:
    euro = "data: 5 €".encode()
    assert await lines_from(euro[:-1], euro[-1:] + b"\n", b"tail") == ["data: 5 €", "tail"]


async def test_a_line_without_end_past_the_bound_is_garbage_not_memory_held_for_ever() -> None:
    piece = b"x" * (1 << 20)
    with pytest.raises(json.JSONDecodeError):
        await lines_from(*[piece] * ((MAX_LINE_BYTES >> 20) + 1))
    assert await lines_from(*[piece] * 4, b"\n") == ["x" * (4 << 20)]  # long lines below it are whole
