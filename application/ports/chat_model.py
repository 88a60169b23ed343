from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass
from typing import Protocol

from domain.agents.config import ModelCapabilities, ModelParams
from domain.conversations.messages import Msg, Usage
from domain.tools.calls import ToolCall, ToolSpec


@dataclass(frozen=True, slots=True)
class ModelChunk:
    """A piece of a model's streamed reply.

    `text` is a delta; `tool_calls` are complete calls, sent once assembled;
    `usage` comes once, at the end, with tokens and price of the call. `finish_reason` says why
    the call ended, in the words of Chat Completions ("stop", "length", "tool_calls",
    "content_filter"…); it comes once, on the call's last chunk (None on every other, and on
    the last too when the model did not say).
    """

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage | None = None
    finish_reason: str | None = None


class ChatModel(Protocol):
    """A chat model that streams. Closing the iterator cancels the upstream call."""

    @property
    def name(self) -> str: ...

    @property
    def capabilities(self) -> ModelCapabilities: ...

    def stream(
        self, messages: Sequence[Msg], tools: Sequence[ToolSpec], params: ModelParams | None = None
    ) -> AsyncGenerator[ModelChunk, None]:
        """Raises `ModelError` when the model fails. `params` (the agent's sampling settings) win
        over the model profile's own."""
        ...
