"""A chat model behind an OpenAI-compatible Chat Completions API (OpenAI, DeepSeek, Qwen,
Ollama, vLLM…), streamed.

The request goes straight over aiohttp (`openai_http`), not through the openai SDK: the request is
built here in wire format, and the SDK's own work to send it (its request options, an httpx request
and headers handed to its aiohttp transport, a response wrapped around aiohttp's) cost more CPU per
call than the rest of the turn's model work. The stream's `data:` lines are read as plain JSON
(`openai_stream.sse_chunks`), and HTTP error statuses are ours to raise (`StatusError`), translated
as the SDK's were (`openai_errors`).

Retries are ours: a call that fails before its first chunk (429, 5xx, a connection error or
timeout) is tried again with jittered exponential backoff, honouring the server's Retry-After up
to a cap; once a chunk is out, a failure is final, since the user has already seen part of an
answer that a new call would not continue. A call that fails before its first chunk reached no
model (`ModelNotReached`): it is billed nothing.
"""

from __future__ import annotations

import asyncio
import json
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any

import aiohttp
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt
from tenacity.wait import wait_random_exponential

from application.ports.chat_model import ChatModel, ModelChunk
from infrastructure.models.openai_convert import (
    openai_messages,
    openai_response_format,
    openai_sampling,
    openai_tool_choice,
    openai_tools,
)
from infrastructure.models.openai_errors import ModelErrors, StatusError, is_transient, retry_after
from infrastructure.models.openai_http import ChatCompletionsHTTP, status_error
from infrastructure.models.openai_stream import ChunkReader, ErrorEvent, sse_chunks, text_lines
from infrastructure.models.tool_names import ToolNames

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator, Sequence

    from domain.agents.config import ModelCapabilities, ModelParams
    from domain.conversations.messages import Msg
    from domain.tools.calls import ToolSpec
    from infrastructure.models.provider_config import ProviderConfig

# An error status, an error event, a broken connection or timeout (aiohttp's socket timeouts are
# TimeoutErrors), and garbage on the wire.
_FAILURES = (StatusError, ErrorEvent, aiohttp.ClientError, OSError, TimeoutError, json.JSONDecodeError)


class _Upstream:
    """An open response whose first chunk has already been read (it decided the retries)."""

    def __init__(self, exits: AsyncExitStack, chunks: AsyncGenerator[dict[str, Any], None], first: Any) -> None:
        self._exits = exits
        self._chunks = chunks
        self._next = first

    async def next(self) -> Any:
        chunk, self._next = self._next, None
        if chunk is None:
            chunk = await anext(self._chunks, None)
        return chunk

    async def close(self) -> None:
        """Closes the HTTP response: the server sees the client hang up and stops generating."""
        await self._exits.aclose()


class OpenAIChatModel(ChatModel):
    def __init__(self, config: ProviderConfig) -> None:
        self._config = config
        self._http = ChatCompletionsHTTP(config)  # its session is made on the first call
        self._errors = ModelErrors(config.model, config.base_url, config.timeout, config.api_key)
        self._backoff = wait_random_exponential(multiplier=config.retry_initial_delay, max=config.retry_max_delay)

    @property
    def name(self) -> str:
        return self._config.model

    @property
    def capabilities(self) -> ModelCapabilities:
        return self._config.capabilities

    async def stream(
        self, messages: Sequence[Msg], tools: Sequence[ToolSpec], params: ModelParams | None = None
    ) -> AsyncGenerator[ModelChunk, None]:
        names = ToolNames.of(tools, messages)
        upstream = await self._connect(self._request(messages, tools, names, params))
        reader = ChunkReader(names, self._config.price)
        try:
            while (chunk := await self._read(upstream)) is not None:
                if text := reader.feed(chunk):
                    yield ModelChunk(text=text)
            for tail in await reader.finish():
                yield tail
        finally:  # also on aclose() and cancellation
            await upstream.close()

    async def aclose(self) -> None:
        """Closes the connection pool; call it on the event loop that used the model."""
        await self._http.aclose()

    def _request(
        self, messages: Sequence[Msg], tools: Sequence[ToolSpec], names: ToolNames, params: ModelParams | None
    ) -> dict[str, Any]:
        request: dict[str, Any] = {
            "model": self._config.model,
            "messages": openai_messages(messages, names),
            "temperature": self._config.temperature,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        request.update(openai_sampling(params))
        request.update(openai_response_format(params))
        if tools:
            request["tools"] = openai_tools(tools, names)
            request.update(openai_tool_choice(params, names))
        return request

    async def _connect(self, request: dict[str, Any]) -> _Upstream:
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self._config.max_retries + 1),
            wait=self._wait,
            retry=retry_if_exception(is_transient),
            reraise=True,
        )
        answered: list[bool] = []  # an attempt's response headers came: the server took the request
        try:
            async for attempt in retrying:
                with attempt:
                    return await self._open(request, answered)
        except _FAILURES as error:  # before the first chunk: nothing of an answer came
            raise self._errors.translate(error, before_answer=not answered) from error
        raise AssertionError("unreachable: tenacity either returns or re-raises")

    async def _open(self, request: dict[str, Any], answered: list[bool]) -> _Upstream:
        """The stream, with its first chunk read; `answered` gets an entry once the headers are in."""
        exits = AsyncExitStack()
        try:
            response = await self._send(exits, request)
            answered.append(True)
            lines = text_lines(response.content.iter_any())
            chunks = sse_chunks(lines)
            exits.push_async_callback(lines.aclose)  # in reverse order: the chunks, the lines, the response
            exits.push_async_callback(chunks.aclose)
            first = await anext(chunks, None)
        except BaseException:
            await exits.aclose()
            raise
        return _Upstream(exits, chunks, first)

    async def _send(self, exits: AsyncExitStack, request: dict[str, Any]) -> aiohttp.ClientResponse:
        """The response to a request, once its headers are in (with an error status: its body read,
        raised as a `StatusError`). aiohttp bounds the connect and every read, but not the upload: a
        server that stops reading would hold the request forever, so the whole exchange up to the
        headers is bounded here as well."""
        async with asyncio.timeout(self._config.timeout):
            response = await exits.enter_async_context(self._http.post(request))
            if response.status >= 400:
                raise await status_error(response)
        return response

    async def _read(self, upstream: _Upstream) -> Any:
        try:
            return await upstream.next()
        except _FAILURES as error:
            raise self._errors.translate(error) from error

    def _wait(self, state: RetryCallState) -> float:
        """Our jittered backoff, or longer if the server asked, never above the cap."""
        error = state.outcome.exception() if state.outcome else None
        asked = retry_after(error) or 0.0
        return min(max(self._backoff(state), asked), self._config.retry_max_delay)
