"""Model calls metered where they happen, without their call sites knowing: decorators of the
ChatModel, ChatModels and Embedder ports, each bound to the purpose and profile it serves.

A call's tokens are those the server reported; a call that ended without them (cut short, or a
server that reports none) is counted here the way the turn counts it (`AgentLoop._estimate`), so a
message's usage and the metrics agree. A call that never reached a model (`ModelNotReached`: refused,
unreachable, an HTTP error, a timeout before any of the answer) spent nothing and counts 0 tokens. An
embedding call counts as a call; its tokens are not known through the Embedder port.

With a `recorder`, each call also goes into the model-call ledger (application/model_calls), priced
by the profile's `price`: a call without server usage is priced on its local counts (`estimated`),
and that usage then ends its stream as a last chunk, so the turn's figures carry the same price.
An embedding call's tokens are counted locally for the ledger.
"""

from __future__ import annotations

import asyncio
import time
from contextlib import aclosing
from dataclasses import replace
from typing import TYPE_CHECKING

from application.chat_turn.agent_loop import prompt_snapshot
from application.errors import ModelNotReached
from application.ports.chat_model import ChatModel, ModelChunk
from application.ports.chat_models import ChatModels, ModelProfile
from application.ports.embedder import Embedder
from application.ports.model_metrics import ModelMetrics, ModelOutcome, ModelPurpose
from domain.conversations.messages import Usage
from infrastructure.models.provider_config import FREE, TokenPrice

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator, Sequence

    from application.model_calls.record_model_calls import RecordModelCalls
    from application.ports.runtime import Tokenizer
    from domain.agents.config import ModelCapabilities, ModelParams
    from domain.conversations.messages import Msg
    from domain.tools.calls import ToolSpec

NOTHING = Usage()  # what a call that never reached a model spent


class MeteredChatModel(ChatModel):
    def __init__(
        self, model: ChatModel, metrics: ModelMetrics, purpose: ModelPurpose, profile: str, tokenizer: Tokenizer,
        *, recorder: RecordModelCalls | None = None, price: TokenPrice = FREE,
    ) -> None:
        self._model = model
        self._metrics = metrics
        self._purpose = purpose
        self._profile = profile
        self._tokenizer = tokenizer
        self._recorder = recorder
        self._price = price

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
        started = time.monotonic()
        try:
            async with aclosing(self._model.stream(messages, tools, params)) as chunks:
                async for chunk in chunks:
                    usage = chunk.usage or usage
                    parts.append(chunk.text)
                    yield chunk
            outcome = ModelOutcome.OK
            if usage is None:  # the server reported none: the priced local count ends the stream
                usage = self._estimate(messages, "".join(parts))
                yield ModelChunk(usage=usage)
        except (GeneratorExit, asyncio.CancelledError):  # the caller stopped reading, or was cancelled
            outcome = ModelOutcome.CANCELLED
            raise
        except ModelNotReached:
            usage = NOTHING
            raise
        finally:
            spent = usage or self._estimate(messages, "".join(parts))
            self._metrics.model_call(self._purpose, self._profile, outcome, spent)
            if self._recorder is not None:
                latency = time.monotonic() - started
                self._recorder.record(self._purpose.value, self._profile, self.name, spent, latency, outcome.value)

    def _estimate(self, messages: Sequence[Msg], text: str) -> Usage:
        prompt, completion = self._tokenizer.count(prompt_snapshot(messages)), self._tokenizer.count(text)
        return replace(self._price.usage(prompt, completion), estimated=True)


class MeteredChatModels(ChatModels):
    """The profiles' models for turns (or for `purpose`: a workflow's): each call counts under the
    purpose and its profile's name."""

    def __init__(
        self, models: ChatModels, metrics: ModelMetrics, tokenizer: Tokenizer, recorder: RecordModelCalls | None = None,
        purpose: ModelPurpose = ModelPurpose.CHAT,
    ) -> None:
        self._purpose = purpose
        self._models = models
        self._metrics = metrics
        self._tokenizer = tokenizer
        self._recorder = recorder
        self._prices: dict[str, TokenPrice] | None = None

    def profiles(self) -> list[ModelProfile]:
        return self._models.profiles()

    def get(self, name: str) -> ChatModel | None:
        """A fresh decorator each time (it costs nothing), so none outlives the registry's model."""
        model = self._models.get(name)
        if model is None:
            return None
        return MeteredChatModel(
            model, self._metrics, self._purpose, name, self._tokenizer, recorder=self._recorder,
            price=self._price_of(name),
        )

    def _price_of(self, name: str) -> TokenPrice:
        if self._prices is None:  # the profiles never change once built
            self._prices = {p.name: TokenPrice(p.input_price, p.output_price) for p in self._models.profiles()}
        return self._prices.get(name, FREE)


class MeteredEmbedder(Embedder):
    """An embedding model's calls, under `embeddings` and `profile` (the embeddings backend)."""

    def __init__(
        self, embedder: Embedder, metrics: ModelMetrics, profile: str, *, recorder: RecordModelCalls | None = None,
        tokenizer: Tokenizer | None = None, price: TokenPrice = FREE,
    ) -> None:
        self._embedder = embedder
        self._metrics = metrics
        self._profile = profile
        self._recorder = recorder
        self._tokenizer = tokenizer
        self._price = price

    @property
    def name(self) -> str:
        return self._embedder.name

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        outcome = ModelOutcome.ERROR
        started = time.monotonic()
        reached = True
        try:
            vectors = await self._embedder.embed(texts)
            outcome = ModelOutcome.OK
            return vectors
        except asyncio.CancelledError:
            outcome = ModelOutcome.CANCELLED
            raise
        except ModelNotReached:
            reached = False
            raise
        finally:
            self._metrics.model_call(ModelPurpose.EMBEDDINGS, self._profile, outcome, None)
            if self._recorder is not None:
                self._recorder.record(
                    ModelPurpose.EMBEDDINGS.value, self._profile, self.name,
                    self._counted(texts) if reached else NOTHING, time.monotonic() - started, outcome.value,
                )

    def _counted(self, texts: Sequence[str]) -> Usage:
        tokens = sum(self._tokenizer.count(t) for t in texts) if self._tokenizer is not None else 0
        return replace(self._price.usage(tokens, 0), estimated=True)
