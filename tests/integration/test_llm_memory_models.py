"""The LLM summariser and entity extractor through the real OpenAI-compatible provider, over HTTP
to the scripted LLM server: the wire request (tool spec, messages) and what comes back."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest

from domain.ids import MessageId
from domain.memory.entity_extraction import ExtractedEntity, read_extraction
from domain.memory.summary import SummaryLimit
from domain.memory.window import Exchange
from infrastructure.memory.llm_memory_models import EXTRACTION_TOOL, LLMEntityExtractor, LLMSummarizer
from infrastructure.models.capabilities import default_capabilities
from infrastructure.models.openai_chat_model import OpenAIChatModel
from infrastructure.models.provider_config import ProviderConfig
from tests.llm_server import ScriptedLLMServer
from tests.llm_server_scripts import call, text, tool_calls

pytestmark = pytest.mark.integration

AT = datetime(2026, 1, 1, tzinfo=UTC)
EXCHANGE = Exchange(MessageId("m1"), "Actually, make it the day after tomorrow.", "Done.", AT)


@pytest.fixture
async def model(server: ScriptedLLMServer) -> AsyncIterator[OpenAIChatModel]:
    made = OpenAIChatModel(ProviderConfig(
        model="gpt-4o-mini", base_url=server.base_url, api_key="sk-test", temperature=0.2, timeout=5.0,
        max_retries=0, capabilities=default_capabilities("gpt-4o-mini"),
    ))
    yield made
    await made.aclose()


async def test_the_extractor_sends_one_tool_shaped_like_the_output_and_reads_its_call(
    server: ScriptedLLMServer, model: OpenAIChatModel
) -> None:
    arguments = {"intent": "reschedule", "entities": [
        {"type": "date", "value": "the day after tomorrow (2026-01-03)", "confidence": 0.92},
    ]}
    server.enqueue(tool_calls(call(EXTRACTION_TOOL, arguments)))
    payload = await LLMEntityExtractor(model).extract(EXCHANGE)
    read = read_extraction(payload)
    assert read.entities == (ExtractedEntity("date", "the day after tomorrow (2026-01-03)", 0.92),)
    assert read.intent == "reschedule"
    request = server.chat_requests[-1]
    [tool] = request.tools
    assert tool["function"]["name"] == EXTRACTION_TOOL
    assert tool["function"]["parameters"]["required"] == ["intent", "entities"]
    assert "make it the day after tomorrow" in request.messages[-1]["content"]


async def test_arguments_that_are_not_json_are_dropped_not_stored(
    server: ScriptedLLMServer, model: OpenAIChatModel
) -> None:
    server.enqueue(tool_calls(call(EXTRACTION_TOOL, '{"intent": "x", "entities": [')))
    read = read_extraction(await LLMEntityExtractor(model).extract(EXCHANGE))
    assert read.entities == ()
    assert read.problems


async def test_the_summariser_asks_for_a_bounded_summary(
    server: ScriptedLLMServer, model: OpenAIChatModel
) -> None:
    server.enqueue(text("The user moved the dinner ", "to the day after tomorrow."))
    summary = await LLMSummarizer(model).update("The user booked a dinner.", [EXCHANGE], SummaryLimit())
    assert summary == "The user moved the dinner to the day after tomorrow."
    request = server.chat_requests[-1]
    assert "at most 120 words" in request.messages[0]["content"]
    assert "The user booked a dinner." in request.messages[1]["content"]
    assert not request.tools


async def test_a_model_without_tools_is_asked_for_json(server: ScriptedLLMServer) -> None:
    plain = OpenAIChatModel(ProviderConfig(
        model="llama-3", base_url=server.base_url, api_key="sk-test", timeout=5.0, max_retries=0,
        capabilities=default_capabilities("llama-3"),
    ))
    try:
        server.enqueue(text('```json\n{"intent": "x", "entities": [{"type": "date", "value": "friday", ',
                            '"confidence": 0.8}]}\n```'))
        read = read_extraction(await LLMEntityExtractor(plain).extract(EXCHANGE))
    finally:
        await plain.aclose()
    assert read.entities == (ExtractedEntity("date", "friday", 0.8),)
    assert not server.chat_requests[-1].tools
