"""Reads the chunks of one streamed Chat Completions reply. No I/O: fed chunk by chunk."""

from __future__ import annotations

from openai.types.chat import ChatCompletionChunk

from application.errors import ModelError
from application.ports.chat_model import ModelChunk
from domain.messages import Usage
from infrastructure.models.provider_config import TokenPrice
from infrastructure.models.tool_calls import ToolCallAssembler
from infrastructure.models.tool_names import ToolNames

MALFORMED = "The model server sent a malformed chunk"


class ChunkReader:
    """Text deltas as they come; tool calls and usage once the reply is complete."""

    def __init__(self, names: ToolNames, price: TokenPrice) -> None:
        self._names = names
        self._price = price
        self._calls = ToolCallAssembler()
        self._usage: Usage | None = None
        self._finished = False

    def feed(self, chunk: ChatCompletionChunk) -> str:
        """The chunk's text delta ('' if none). Raises ModelError for a malformed chunk."""
        # The SDK does not validate chunks: a broken one arrives with fields None or missing.
        if getattr(chunk, "choices", None) is None:
            raise ModelError(f"{MALFORMED} (no choices).")
        try:
            return self._read(chunk)
        except (AttributeError, TypeError, ValueError) as error:
            raise ModelError(f"{MALFORMED} ({type(error).__name__}).") from error

    def _read(self, chunk: ChatCompletionChunk) -> str:
        if chunk.usage is not None:  # the last chunk, with `choices: []`, when include_usage is asked
            self._usage = self._price.usage(chunk.usage.prompt_tokens, chunk.usage.completion_tokens)
        text = ""
        for choice in chunk.choices:
            self._finished = self._finished or bool(choice.finish_reason)
            text += choice.delta.content or ""
            for call in choice.delta.tool_calls or []:
                function = call.function
                name, arguments = (function.name, function.arguments) if function else (None, None)
                self._calls.add(int(call.index), call.id, name, arguments)
        return text

    def finish(self) -> list[ModelChunk]:
        """Tool calls (if any), then usage (if the server sent it; else the loop counts tokens)."""
        if not self._finished:
            raise ModelError("The model's stream ended before the reply was finished.")
        tail: list[ModelChunk] = []
        calls = self._calls.calls(self._names)
        if calls:
            tail.append(ModelChunk(tool_calls=calls))
        if self._usage is not None:
            tail.append(ModelChunk(usage=self._usage))
        return tail
