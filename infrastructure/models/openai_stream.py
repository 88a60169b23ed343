"""Reads the chunks of one streamed Chat Completions reply: the SSE `data:` lines as JSON, then
each chunk's deltas. No I/O: fed line by line and chunk by chunk."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import ssl
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import anyio
import httpx2
import openai

from application.errors import ModelError
from application.ports.chat_model import ModelChunk
from infrastructure.models.tool_calls import ToolCallAssembler

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator, AsyncIterator

    from domain.conversations.messages import Usage
    from infrastructure.models.provider_config import TokenPrice
    from infrastructure.models.tool_names import ToolNames

log = logging.getLogger(__name__)

MALFORMED = "The model server sent a malformed chunk"


# Transport failures the SDK itself reports as a connection error (httpx2 leaves some TLS ones unmapped).
_CONNECTION_ERRORS = (httpx2.RequestError, ssl.SSLError, anyio.EndOfStream)
DRAIN_S = 0.1  # how long the rest of a finished response is read, for its connection to be reused


async def sse_chunks(lines: AsyncIterator[str], request: httpx2.Request) -> AsyncGenerator[dict[str, Any], None]:
    """Each event's `data` as a JSON object, until `[DONE]`. Like the SDK's own stream, an
    `{"error": …}` event raises `openai.APIError`, and a timeout or a broken connection the
    SDK's errors for them; data that is not a JSON object is a malformed chunk."""
    try:
        async for payload in _event_data(lines):
            if payload.startswith("[DONE]"):
                await _drain(lines)
                return
            chunk = json.loads(payload)
            if not isinstance(chunk, dict):
                raise ModelError(f"{MALFORMED} (not a JSON object).")
            if chunk.get("error"):
                error = chunk["error"]
                message = error.get("message") if isinstance(error, dict) else None
                raise openai.APIError(str(message or "An error occurred during streaming"), request, body=error)
            yield chunk
    except httpx2.TimeoutException as error:
        raise openai.APITimeoutError(request=request) from error
    except _CONNECTION_ERRORS as error:
        raise openai.APIConnectionError(request=request) from error


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
