"""A span for each model call, without its call sites knowing: decorators of the ChatModel,
ChatModels and Embedder ports, like the metered ones beside which the containers put them
(infrastructure/metrics/metered_chat_model.py), and bound to the same purpose and profile.

A call's span is a leaf (`Tracer.leaf_span`): the stream yields to the turn between chunks, and the
turn's own spans must not become children of the model call. Its tokens are those the server
reported, else counted locally (`estimated`), as the metrics count them; a call that never reached a
model (`ModelNotReached`) spent none.
"""

from __future__ import annotations

from contextlib import aclosing
from typing import TYPE_CHECKING

from application.chat_turn.agent_loop import prompt_snapshot
from application.errors import ModelNotReached
from application.ports.chat_model import ChatModel, ModelChunk
from application.ports.chat_models import ChatModels, ModelProfile
from application.ports.embedder import Embedder
from application.ports.model_metrics import ModelPurpose
from application.ports.tracing import SpanName
from domain.conversations.messages import Usage

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator, Sequence

    from application.ports.runtime import Tokenizer
    from application.ports.tracing import Span, Tracer
    from domain.agents.config import ModelCapabilities, ModelParams
    from domain.conversations.messages import Msg
    from domain.tools.calls import ToolSpec


class TracedChatModel(ChatModel):
    def __init__(
        self, model: ChatModel, tracer: Tracer, purpose: ModelPurpose, profile: str, tokenizer: Tokenizer
    ) -> None:
        self._model = model
        self._tracer = tracer
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
        with self._tracer.leaf_span(
            SpanName.MODEL_CALL, purpose=self._purpose.value, profile=self._profile, model=self._model.name,
            tools_offered=len(tools),
        ) as span:
            usage: Usage | None = None
            parts: list[str] = []
            finish = ""
            try:
                async with aclosing(self._model.stream(messages, tools, params)) as chunks:
                    async for chunk in chunks:
                        usage = chunk.usage or usage
                        finish = chunk.finish_reason or finish
                        parts.append(chunk.text)
                        yield chunk
            except ModelNotReached:  # no model ran: nothing spent, as the ledger says
                usage = Usage()
                raise
            finally:
                _spent(span, usage or self._estimate(messages, "".join(parts)), finish)

    def _estimate(self, messages: Sequence[Msg], text: str) -> Usage:
        return Usage(self._tokenizer.count(prompt_snapshot(messages)), self._tokenizer.count(text), estimated=True)


def _spent(span: Span, usage: Usage, finish_reason: str) -> None:
    span.set(
        prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens, cost_usd=usage.price,
        tokens_estimated=usage.estimated, finish_reason=finish_reason,
    )


class TracedChatModels(ChatModels):
    """The profiles' models for turns (or for `purpose`: a workflow's): each call is a span of the
    purpose under its profile's name."""

    def __init__(
        self, models: ChatModels, tracer: Tracer, tokenizer: Tokenizer, purpose: ModelPurpose = ModelPurpose.CHAT,
    ) -> None:
        self._purpose = purpose
        self._models = models
        self._tracer = tracer
        self._tokenizer = tokenizer

    def profiles(self) -> list[ModelProfile]:
        return self._models.profiles()

    def get(self, name: str) -> ChatModel | None:
        model = self._models.get(name)
        if model is None:
            return None
        return TracedChatModel(model, self._tracer, self._purpose, name, self._tokenizer)


class TracedEmbedder(Embedder):
    """An embedding model's calls, as `embeddings` spans of `profile` (the embeddings backend)."""

    def __init__(self, embedder: Embedder, tracer: Tracer, profile: str) -> None:
        self._embedder = embedder
        self._tracer = tracer
        self._profile = profile

    @property
    def name(self) -> str:
        return self._embedder.name

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        with self._tracer.span(
            SpanName.MODEL_CALL, purpose=ModelPurpose.EMBEDDINGS.value, profile=self._profile,
            model=self._embedder.name, texts=len(texts),
        ):
            return await self._embedder.embed(texts)
