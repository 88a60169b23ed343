"""The decorators that meter model calls and event appends: what reaches the Metrics port for each
way a call ends, and that the call itself is passed through unchanged."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from contextlib import aclosing
from dataclasses import replace
from datetime import datetime

import pytest

from application.chat_turn.agent_loop import prompt_snapshot
from application.errors import ModelError, ModelNotReached
from application.model_calls.record_model_calls import RecordModelCalls
from application.ports.chat_model import ModelChunk
from application.ports.model_metrics import ModelOutcome, ModelPurpose
from domain.billing.model_calls import ModelCall, PurposeUsage
from domain.conversations.messages import Msg, Role, TextBlock, Usage
from domain.conversations.thoughts import AgentThought, ThoughtEvent
from domain.ids import ConversationId, MessageId, TaskId, ThoughtId
from infrastructure.events.inprocess_event_log import InProcessEventLog
from infrastructure.metrics.inprocess_metrics import InProcessMetrics
from infrastructure.metrics.metered_chat_model import MeteredChatModel, MeteredChatModels, MeteredEmbedder
from infrastructure.metrics.metered_event_log import MeteredEventLog
from infrastructure.models.provider_config import TokenPrice
from tests.fakes import FakeChatModels, FakeClock, FakeEmbedder, ScriptedModel, SequentialIds, WordTokenizer

MESSAGES = [Msg("m1", "user", Role.USER, (TextBlock("tell me a story"),), datetime(2026, 1, 1).astimezone())]
REPORTED = Usage(12, 3, 0.25)


def metered(model: ScriptedModel, metrics: InProcessMetrics) -> MeteredChatModel:
    return MeteredChatModel(model, metrics, ModelPurpose.SUMMARY, "default", WordTokenizer())


async def test_a_call_that_ends_counts_once_with_the_usage_the_server_reported_and_its_chunks_pass_unchanged() -> None:
    chunks = [ModelChunk(text="Once"), ModelChunk(text=" upon"), ModelChunk(usage=REPORTED, finish_reason="stop")]
    metrics = InProcessMetrics()
    got = [c async for c in metered(ScriptedModel([chunks]), metrics).stream(MESSAGES, [])]
    assert got == chunks
    assert metrics.of("model_call") == [(ModelPurpose.SUMMARY, "default", ModelOutcome.OK, REPORTED)]


async def test_a_call_without_server_usage_is_counted_as_the_turn_counts_it() -> None:
    metrics = InProcessMetrics()
    [c async for c in metered(ScriptedModel([[ModelChunk(text="one two three")]]), metrics).stream(MESSAGES, [])]
    expected = Usage(WordTokenizer().count(prompt_snapshot(MESSAGES)), 3, estimated=True)
    assert metrics.of("model_call") == [(ModelPurpose.SUMMARY, "default", ModelOutcome.OK, expected)]


async def test_a_call_its_reader_closes_early_counts_as_cancelled_with_what_it_streamed_so_far() -> None:
    model = ScriptedModel([[ModelChunk(text="one two"), ModelChunk(text=" never")]])
    metrics = InProcessMetrics()
    async with aclosing(metered(model, metrics).stream(MESSAGES, [])) as stream:
        async for _ in stream:
            break
    [(_, _, outcome, usage)] = metrics.of("model_call")
    assert outcome is ModelOutcome.CANCELLED
    assert isinstance(usage, Usage)
    assert (usage.completion_tokens, usage.estimated) == (2, True)
    assert model.closed == 1  # closing the decorator closed the model's own stream


async def test_a_cancelled_call_counts_as_cancelled() -> None:
    model = ScriptedModel([[ModelChunk(text="a"), ModelChunk(text="b")]])

    async def hang(index: int) -> None:
        if index == 1:
            await asyncio.sleep(30)

    model.on_chunk = hang
    metrics = InProcessMetrics()

    async def read() -> None:
        [c async for c in metered(model, metrics).stream(MESSAGES, [])]

    task = asyncio.create_task(read())
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert [outcome for _, _, outcome, _ in metrics.of("model_call")] == [ModelOutcome.CANCELLED]


async def test_a_failing_call_counts_as_an_error_and_the_failure_reaches_the_caller() -> None:
    def fail(*_: object) -> list[ModelChunk]:
        raise ModelError("down")

    metrics = InProcessMetrics()
    with pytest.raises(ModelError):
        [c async for c in metered(ScriptedModel([fail]), metrics).stream(MESSAGES, [])]
    assert [outcome for _, _, outcome, _ in metrics.of("model_call")] == [ModelOutcome.ERROR]


async def test_the_profiles_models_count_under_chat_and_the_profile_name() -> None:
    metrics = InProcessMetrics()
    fast = ScriptedModel([[ModelChunk(text="hi", usage=REPORTED)]])
    models = MeteredChatModels(FakeChatModels(default=ScriptedModel([]), fast=fast), metrics, WordTokenizer())
    assert [p.name for p in models.profiles()] == ["default", "fast"]
    assert models.get("missing") is None
    model = models.get("fast")
    assert model is not None
    assert model.name == fast.name
    [c async for c in model.stream(MESSAGES, [])]
    assert metrics.of("model_call") == [(ModelPurpose.CHAT, "fast", ModelOutcome.OK, REPORTED)]


async def test_an_embedding_call_counts_under_embeddings_without_tokens() -> None:
    metrics, inner = InProcessMetrics(), FakeEmbedder()
    embedder = MeteredEmbedder(inner, metrics, "openai")
    assert embedder.name == inner.name
    vectors = await embedder.embed(["a", "b"])
    assert len(vectors) == 2
    assert metrics.of("model_call") == [(ModelPurpose.EMBEDDINGS, "openai", ModelOutcome.OK, None)]


async def test_each_append_of_events_is_timed_and_the_log_is_the_one_behind_it() -> None:
    metrics, inner = InProcessMetrics(), InProcessEventLog()
    log = MeteredEventLog(inner, metrics)
    task = TaskId("t1")
    await log.open(task)
    first = AgentThought(ThoughtId("e1"), task, ConversationId("c1"), MessageId("m1"), ThoughtEvent.AGENT_MESSAGE)
    assert await log.append(task, first) == 1
    assert await log.append_many(task, [first, first]) == 3
    assert [logged.id for logged in await inner.read(task, 0, 0)] == [1, 2, 3]
    timings = metrics.of("event_appended")
    assert len(timings) == 2
    assert all(isinstance(seconds, float) and seconds >= 0 for (seconds,) in timings)


class ListLedger:
    """The ledger's writes, kept in a list (what `RecordModelCalls` hands it)."""

    def __init__(self) -> None:
        self.calls: list[ModelCall] = []

    async def add(self, calls: Sequence[ModelCall]) -> None:
        self.calls.extend(calls)

    async def conversation_usage(self, conversation_id: str) -> list[PurposeUsage]:
        return []

    async def spent(self, owner: str, since: datetime, agent_id: str | None = None) -> float:
        return sum(c.usage.price for c in self.calls)


def recording() -> tuple[RecordModelCalls, ListLedger]:
    ledger = ListLedger()
    return RecordModelCalls(ledger, FakeClock(), SequentialIds()), ledger


async def test_a_call_that_never_reached_a_model_costs_nothing_in_the_metrics_and_the_ledger() -> None:
    def refused(*_: object) -> list[ModelChunk]:
        raise ModelNotReached("The model server could not be reached.")

    metrics, (recorder, ledger) = InProcessMetrics(), recording()
    model = MeteredChatModel(ScriptedModel([refused]), metrics, ModelPurpose.CHAT, "default", WordTokenizer(),
                             recorder=recorder, price=TokenPrice(1.0, 4.0))
    with pytest.raises(ModelNotReached):
        [c async for c in model.stream(MESSAGES, [])]
    await recorder.flush()
    assert metrics.of("model_call") == [(ModelPurpose.CHAT, "default", ModelOutcome.ERROR, Usage())]
    assert [(c.usage, c.status) for c in ledger.calls] == [(Usage(), "error")]


async def test_a_call_cut_after_some_output_is_billed_for_what_was_sent_and_received_as_an_estimate() -> None:
    async def cut(index: int) -> None:
        if index == 1:
            raise ModelError("The model server closed the connection before the answer was complete.")

    streamed = ScriptedModel([[ModelChunk(text="one two"), ModelChunk(text=" never")]])
    streamed.on_chunk = cut
    (recorder, ledger), price = recording(), TokenPrice(1.0, 4.0)
    model = MeteredChatModel(streamed, InProcessMetrics(), ModelPurpose.CHAT, "default", WordTokenizer(),
                             recorder=recorder, price=price)
    with pytest.raises(ModelError):
        [c async for c in model.stream(MESSAGES, [])]
    await recorder.flush()
    prompt = WordTokenizer().count(prompt_snapshot(MESSAGES))
    assert [c.usage for c in ledger.calls] == [replace(price.usage(prompt, 2), estimated=True)]


async def test_an_embedding_call_that_never_reached_its_model_costs_nothing_in_the_ledger() -> None:
    class Unreachable(FakeEmbedder):
        async def embed(self, texts: Sequence[str]) -> list[list[float]]:
            raise ModelNotReached("The embedding server could not be reached.")

    recorder, ledger = recording()
    embedder = MeteredEmbedder(Unreachable(), InProcessMetrics(), "openai", recorder=recorder,
                               tokenizer=WordTokenizer(), price=TokenPrice(0.02, 0.0))
    with pytest.raises(ModelNotReached):
        await embedder.embed(["a long text to embed"])
    await recorder.flush()
    assert [c.usage for c in ledger.calls] == [Usage()]
