"""OnProfiles: a model work's adapter on the profile named, never on another profile's model."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

import pytest

from application.errors import ModelError
from application.ports.chat_model import ModelChunk
from application.ports.chat_models import ModelProfile
from application.ports.model_metrics import ModelOutcome, ModelPurpose
from domain.ids import MessageId
from domain.memory.summary import SummaryLimit
from domain.memory.window import Exchange
from infrastructure.memory.extractive_summarizer import ExtractiveSummarizer
from infrastructure.memory.llm_memory_models import LLMSummarizer
from infrastructure.metrics.inprocess_metrics import InProcessMetrics
from infrastructure.models.chat_model_registry import ChatModelRegistry
from infrastructure.models.model_profiles import profile_specs
from infrastructure.models.observed_models import ModelObserver
from infrastructure.models.profile_work import OnProfiles
from infrastructure.models.scripted_model import ScriptedChatModel
from infrastructure.tracing.recording_tracer import RecordingTracer
from tests.fakes import FakeChatModels, ScriptedModel, WordTokenizer

EXCHANGE = Exchange(MessageId("m1"), "I moved to Porto last week", "Noted.", datetime(2026, 1, 1).astimezone())
LLM = {"provider": "scripted", "temperature": 0.2, "timeout": 30.0, "max_retries": 0, "retry_initial_delay": 0.1,
       "retry_max_delay": 1.0, "model": "", "base_url": None, "api_key": None, "prices": {}}


class PricedModels(FakeChatModels):
    """Fake profiles of an LLM provider, each at 1 USD per million tokens in and 2 out."""

    def profiles(self) -> list[ModelProfile]:
        return [replace(p, provider="openai", input_price=1.0, output_price=2.0) for p in super().profiles()]


def summarizers(models: FakeChatModels | ChatModelRegistry, metrics: InProcessMetrics) -> OnProfiles[object]:
    observer = ModelObserver(metrics, RecordingTracer(), WordTokenizer())
    return OnProfiles(models, ModelPurpose.SUMMARY, ExtractiveSummarizer(), LLMSummarizer, observer)


async def test_the_work_runs_on_the_named_profile_s_model_counted_under_its_name_and_price() -> None:
    home, second = ScriptedModel([[ModelChunk(text="home")]]), ScriptedModel([[ModelChunk(text="Lives in Porto.")]])
    metrics = InProcessMetrics()
    summarizer = summarizers(PricedModels(default=home, second=second), metrics)("second")
    assert isinstance(summarizer, LLMSummarizer)
    assert await summarizer.condense([EXCHANGE], SummaryLimit()) == "Lives in Porto."
    assert (len(home.calls), len(second.calls)) == (0, 1)
    [(purpose, profile, outcome, usage)] = metrics.of("model_call")
    assert (purpose, profile, outcome) == (ModelPurpose.SUMMARY, "second", ModelOutcome.OK)
    assert usage.price == pytest.approx((usage.prompt_tokens * 1.0 + usage.completion_tokens * 2.0) / 1e6)


def test_a_scripted_profile_gets_the_offline_work_and_an_unknown_one_is_refused_not_replaced() -> None:
    tokenizer = WordTokenizer()
    entries = [{"name": "second", "provider": "scripted", "model": "x"}]
    registry = ChatModelRegistry(ScriptedChatModel(tokenizer), profile_specs(LLM, entries), tokenizer)
    on = summarizers(registry, InProcessMetrics())
    assert isinstance(on("default"), ExtractiveSummarizer)
    assert isinstance(on("second"), ExtractiveSummarizer)
    with pytest.raises(ModelError, match="'gpt-9' is not configured"):
        on("gpt-9")
