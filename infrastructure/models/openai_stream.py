"""Reads the chunks of one streamed Chat Completions reply: the body's lines, the SSE `data:` lines
as JSON, then each chunk's deltas. No I/O: fed piece by piece, line by line and chunk by chunk."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from application.errors import ModelError
from application.ports.chat_model import ModelChunk
from infrastructure.models.tool_calls import ToolCallAssembler

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator, AsyncIterable, AsyncIterator

    from domain.conversations.messages import Usage
    from infrastructure.models.provider_config import TokenPrice
    from infrastructure.models.tool_names import ToolNames

log = logging.getLogger(__name__)

MALFORMED = "The model server sent a malformed chunk"
MAX_LINE_BYTES = 16 << 20  # of one line of the stream (an event's data line: a whole answer at most)
DRAIN_S = 0.1  # how long the rest of a finished response is read, for its connection to be reused


class ErrorEvent(Exception):
    """An `{"error": …}` event in the stream: the server gave up mid-answer, in words for the log."""


async def sse_chunks(lines: AsyncIterator[str]) -> AsyncGenerator[dict[str, Any], None]:
    """Each event's `data` as a JSON object, until `[DONE]`. As in the openai SDK's own stream, an
    `{"error": …}` event is an error (`ErrorEvent`); data that is not a JSON object is a malformed
    chunk. A broken connection or a timeout comes through as the transport raised it."""
    async for payload in _event_data(lines):
        if payload.startswith("[DONE]"):
            await _drain(lines)
            return
        chunk = json.loads(payload)
        if not isinstance(chunk, dict):
            raise ModelError(f"{MALFORMED} (not a JSON object).")
        if error := chunk.get("error"):
            message = error.get("message") if isinstance(error, dict) else None
            raise ErrorEvent(str(message or "An error occurred during streaming"))
        yield chunk


async def text_lines(body: AsyncIterable[bytes]) -> AsyncGenerator[str, None]:
    r"""The body's lines as its pieces come, without their ending: `\n`, `\r\n` or `\r`, as SSE
    allows, a `\r\n` split between two pieces included. Only each new piece is searched for a line
    end, and a line is at most MAX_LINE_BYTES: a server sending bytes without one is garbage."""
    held: list[bytes] = []  # the pieces of the line not ended yet
    size, after_cr = 0, False
    async for piece in body:
        data = piece[1:] if after_cr and piece.startswith(b"\n") else piece
        after_cr = data.endswith(b"\r")
        *ended, rest = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
        for line in ended:
            yield (b"".join(held) + line).decode(errors="replace")
            held, size = [], 0
        held.append(rest)
        size += len(rest)
        if size > MAX_LINE_BYTES:
            raise json.JSONDecodeError(f"a line of over {MAX_LINE_BYTES} bytes", "", 0)
    if size:
        yield b"".join(held).decode(errors="replace")


async def _drain(lines: AsyncIterator[str]) -> None:
    """Read what follows `[DONE]` so that the connection goes back to the pool, briefly: the answer
    is complete, so a server that lingers or breaks off now must not turn it into a failure."""
    with contextlib.suppress(Exception):
        async with asyncio.timeout(DRAIN_S):
            async for _ in lines:
                pass


async def _event_data(lines: AsyncIterator[str]) -> AsyncIterator[str]:
    """The `data` of each server-sent event (its `data:` lines joined); other fields are not used."""
    data: list[str] = []
    async for line in lines:
        if line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
        elif not line and data:
            yield "\n".join(data)
            data = []
    if data:
        yield "\n".join(data)


class ChunkReader:
    """Text deltas as they come; tool calls, usage and the finish reason once the reply is complete."""

    def __init__(self, names: ToolNames, price: TokenPrice) -> None:
        self._names = names
        self._price = price
        self._calls = ToolCallAssembler()
        self._usage: Usage | None = None
        self._finish_reason: str | None = None  # the first choice's, once a chunk gives it

    def feed(self, chunk: Any) -> str:
        """The chunk's text delta ('' if none). Raises ModelError for a malformed chunk."""
        if not isinstance(chunk, dict) or not isinstance(chunk.get("choices"), list):
            raise ModelError(f"{MALFORMED} (no choices).")
        try:
            return self._read(chunk)
        except (AttributeError, KeyError, TypeError, ValueError) as error:
            log.warning("a malformed chunk from the model server: %r", error)
            raise ModelError(f"{MALFORMED}.") from error

    def _read(self, chunk: dict[str, Any]) -> str:
        usage = chunk.get("usage")
        if usage is not None:  # the last chunk, with `choices: []`, when include_usage is asked
            self._usage = self._price.usage(int(usage["prompt_tokens"]), int(usage["completion_tokens"]))
        text = ""
        for choice in chunk["choices"]:
            reason = choice.get("finish_reason")
            if reason and self._finish_reason is None:
                self._finish_reason = str(reason)
            delta = choice.get("delta") or {}
            text += delta.get("content") or ""
            for call in delta.get("tool_calls") or []:
                function = call.get("function") or {}
                self._calls.add(int(call["index"]), call.get("id"), function.get("name"), function.get("arguments"))
        return text

    async def finish(self) -> list[ModelChunk]:
        """Tool calls (if any), then usage (if the server sent it; else the loop counts tokens); the
        last of them carries the finish reason (`choices[0].finish_reason`), alone if there is none."""
        if self._finish_reason is None:
            raise ModelError("The model's stream ended before the reply was finished.")
        tail: list[ModelChunk] = []
        calls = await self._calls.calls(self._names)
        if calls:
            tail.append(ModelChunk(tool_calls=calls))
        if self._usage is not None:
            tail.append(ModelChunk(usage=self._usage))
        if not tail:
            return [ModelChunk(finish_reason=self._finish_reason)]
        tail[-1] = replace(tail[-1], finish_reason=self._finish_reason)
        return tail
