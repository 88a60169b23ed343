"""The one place a model is wrapped so that each of its calls is counted in the metrics, written to
the cost ledger at its profile's price, and traced as a span of its purpose: a turn's models, the
memory upkeep's, the titles' and follow-ups', a workflow's, and the embedders."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from application.ports.model_metrics import ModelPurpose
from infrastructure.metrics.metered_chat_model import MeteredChatModel, MeteredChatModels, MeteredEmbedder
from infrastructure.models.provider_config import FREE, TokenPrice
from infrastructure.tracing.traced_chat_model import TracedChatModel, TracedChatModels, TracedEmbedder

if TYPE_CHECKING:
    from application.model_calls.record_model_calls import RecordModelCalls
    from application.ports.chat_model import ChatModel
    from application.ports.chat_models import ChatModels
    from application.ports.embedder import Embedder
    from application.ports.model_metrics import ModelMetrics
    from application.ports.runtime import Tokenizer
    from application.ports.tracing import Tracer


@dataclass(frozen=True, slots=True)
class ModelObserver:
    metrics: ModelMetrics
    tracer: Tracer
    tokenizer: Tokenizer
    recorder: RecordModelCalls | None = None  # None: counted and traced, not written to the ledger

    def chat_model(self, model: ChatModel, purpose: ModelPurpose, profile: str, price: TokenPrice) -> ChatModel:
        """One profile's model, for one purpose."""
        metered = MeteredChatModel(
            model, self.metrics, purpose, profile, self.tokenizer, recorder=self.recorder, price=price
        )
        return TracedChatModel(metered, self.tracer, purpose, profile, self.tokenizer)

    def chat_models(self, models: ChatModels, purpose: ModelPurpose = ModelPurpose.CHAT) -> ChatModels:
        """Every profile's model, for one purpose (a turn's, a workflow's)."""
        metered = MeteredChatModels(models, self.metrics, self.tokenizer, self.recorder, purpose)
        return TracedChatModels(metered, self.tracer, self.tokenizer, purpose)

    def embedder(self, embedder: Embedder, profile: str, price: TokenPrice = FREE) -> Embedder:
        """An embedding model (`profile`: the embeddings backend)."""
        metered = MeteredEmbedder(
            embedder, self.metrics, profile, recorder=self.recorder, tokenizer=self.tokenizer, price=price
        )
        return TracedEmbedder(metered, self.tracer, profile)
