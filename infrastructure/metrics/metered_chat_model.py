"""Model calls metered where they happen, without their call sites knowing: decorators of the
ChatModel, ChatModels and Embedder ports, each bound to the purpose and profile it serves.

A call's tokens are those the server reported; a call that ended without them (cut short, or a
server that reports none) is counted here the way the turn counts it (`AgentLoop._estimate`), so a
message's usage and the metrics agree. An embedding call counts as a call; its tokens are not known
through the Embedder port.
"""

from __future__ import annotations

import asyncio
from contextlib import aclosing
from typing import TYPE_CHECKING

from application.chat_turn.agent_loop import prompt_snapshot
from application.ports.chat_model import ChatModel, ModelChunk
from application.ports.chat_models import ChatModels, ModelProfile
from application.ports.embedder import Embedder
from application.ports.metrics import Metrics, ModelOutcome, ModelPurpose
from domain.messages import Usage

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator, Sequence

    from application.ports.runtime import Tokenizer
    from domain.agent import ModelCapabilities, ModelParams
    from domain.messages import Msg
    from domain.tools import ToolSpec


class MeteredChatModel(ChatModel):
    def __init__(
        self, model: ChatModel, metrics: Metrics, purpose: ModelPurpose, profile: str, tokenizer: Tokenizer
    ) -> None:
        self._model = model
        self._metrics = metrics
        self._purpose = purpose
        self._profile = profile
        self._tokenizer = tokenizer

    @property
    def name(self) -> str:
        return self._model.name

    @property
    def capabilities(self) -> ModelCapabilities:
        return self._model.capabilities

    async def stream(
        self, messages: Sequence[Msg], tools: Sequence[ToolSpec], params: ModelParams | None = None
    ) -> AsyncGenerator[ModelChunk, None]:
        usage: Usage | None = None
        parts: list[str] = []
        outcome = ModelOutcome.ERROR
        try:
            async with aclosing(self._model.stream(messages, tools, params)) as chunks:
                async for chunk in chunks:
                    usage = chunk.usage or usage
                    parts.append(chunk.text)
                    yield chunk
            outcome = ModelOutcome.OK
        except (GeneratorExit, asyncio.CancelledError):  # the caller stopped reading, or was cancelled
            outcome = ModelOutcome.CANCELLED
            raise
        finally:
            spent = usage or self._estimate(messages, "".join(parts))
            self._metrics.model_call(self._purpose, self._profile, outcome, spent)

    def _estimate(self, messages: Sequence[Msg], text: str) -> Usage:
        return Usage(self._tokenizer.count(prompt_snapshot(messages)), self._tokenizer.count(text), estimated=True)


class MeteredChatModels(ChatModels):
    """The profiles' models for turns: each call counts under `chat` and its profile's name."""

    def __init__(self, models: ChatModels, metrics: Metrics, tokenizer: Tokenizer) -> None:
        self._models = models
        self._metrics = metrics
        self._tokenizer = tokenizer

    def profiles(self) -> list[ModelProfile]:
        return self._models.profiles()

    def get(self, name: str) -> ChatModel | None:
        """A fresh decorator each time (it costs nothing), so none outlives the registry's model."""
        model = self._models.get(name)
        if model is None:
            return None
        return MeteredChatModel(model, self._metrics, ModelPurpose.CHAT, name, self._tokenizer)


class MeteredEmbedder(Embedder):
    """An embedding model's calls, under `embeddings` and `profile` (the embeddings backend)."""

    def __init__(self, embedder: Embedder, metrics: Metrics, profile: str) -> None:
        self._embedder = embedder
        self._metrics = metrics
        self._profile = profile

    @property
    def name(self) -> str:
        return self._embedder.name

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        outcome = ModelOutcome.ERROR
        try:
            vectors = await self._embedder.embed(texts)
            outcome = ModelOutcome.OK
            return vectors
        except asyncio.CancelledError:
            outcome = ModelOutcome.CANCELLED
            raise
        finally:
            self._metrics.model_call(ModelPurpose.EMBEDDINGS, self._profile, outcome, None)
