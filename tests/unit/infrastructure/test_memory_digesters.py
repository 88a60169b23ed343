"""The upkeep's digesters: the LLM one (one call, one tool, the reply split per exchange) and the
composed one (the offline pair behind the same port)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from application.ports.chat_model import ModelChunk
from application.ports.memory_models import DigestRequest
from domain.agents.config import ModelCapabilities
from domain.ids import MessageId
from domain.memory.summary import SummaryLimit
from domain.memory.window import Exchange
from domain.tools.calls import ToolCall
from infrastructure.memory.composed_digester import ComposedDigester
from infrastructure.memory.extractive_summarizer import ExtractiveSummarizer
from infrastructure.memory.llm_memory_digester import DIGEST_TOOL, LLMMemoryDigester
from infrastructure.memory.rule_entity_extractor import RuleBasedEntityExtractor
from tests.fakes import ScriptedModel

AT = datetime(2026, 1, 1, tzinfo=UTC)
TWO = (Exchange(MessageId("m1"), "My name is Ada.", "Hi Ada.", AT),
       Exchange(MessageId("m2"), "I live in Porto.", "Nice.", AT))


def ask(summary: bool = True, entities: bool = True) -> DigestRequest:
    return DigestRequest("Ada likes tea.", (("city", "Lisbon"),), TWO, SummaryLimit() if summary else None, entities)


def entity(turn: Any, kind: str, value: str) -> dict[str, Any]:
    return {"turn": turn, "type": kind, "value": value, "confidence": 0.9, "scope": "user", "explicit": True}


async def test_one_call_sends_the_old_summary_the_known_entities_and_the_numbered_turns_and_splits_the_reply() -> None:
    arguments = {"summary": "Ada lives in Porto.", "intent": "inform",
                 "entities": [entity(1, "name", "Ada"), entity(2, "city", "Porto"), entity("x", "pet", "Rex")]}
    model = ScriptedModel([[ModelChunk(tool_calls=(ToolCall("c1", DIGEST_TOOL, arguments),))]])
    digest = await LLMMemoryDigester(model).digest(ask())
    assert digest.summary == "Ada lives in Porto."
    first, second = digest.extractions
    assert isinstance(second, dict)
    assert first == {"intent": "", "entities": [{k: v for k, v in entity(1, "name", "Ada").items() if k != "turn"}]}
    assert [e["value"] for e in second["entities"]] == ["Porto", "Rex"], "an unreadable turn: the newest"
    assert second["intent"] == "inform"
    [(messages, [spec])] = model.calls
    assert spec.name == DIGEST_TOOL
    assert spec.parameters["required"] == ["summary", "intent", "entities"]
    assert "at most 120 words" in messages[0].text
    sent = messages[1].text
    assert "Ada likes tea." in sent
    assert "- city: Lisbon" in sent
    assert "[2] User: I live in Porto." in sent


async def test_only_the_parts_asked_for_are_in_the_tool() -> None:
    model = ScriptedModel([[ModelChunk(tool_calls=(ToolCall("c1", DIGEST_TOOL, {"summary": "S."}),))]])
    digest = await LLMMemoryDigester(model).digest(ask(entities=False))
    assert (digest.summary, digest.extractions) == ("S.", ())
    assert model.calls[0][1][0].parameters["required"] == ["summary"]
    assert "Known entities" not in model.calls[0][0][1].text


async def test_a_model_without_tools_is_asked_for_json_and_prose_is_taken_for_the_summary() -> None:
    plain = ModelCapabilities(tool_call=False, agent_thought=True)
    model = ScriptedModel([[ModelChunk(text='```json\n{"summary": "S.", "intent": "x", "entities": []}\n```')],
                           [ModelChunk(text="Ada lives in Porto.")]], plain)
    fenced = await LLMMemoryDigester(model).digest(ask())
    assert fenced.summary == "S."
    assert model.calls[0][1] == []
    assert "JSON object" in model.calls[0][0][0].text
    prose = await LLMMemoryDigester(model).digest(ask())
    assert prose.summary == "Ada lives in Porto."
    assert prose.extractions[-1] == "Ada lives in Porto.", "left for validation to report"


async def test_the_offline_digester_is_the_extractive_summary_and_the_rule_based_entities() -> None:
    digest = await ComposedDigester(ExtractiveSummarizer(), RuleBasedEntityExtractor()).digest(ask())
    assert digest.summary is not None
    assert "Porto" in digest.summary
    assert len(digest.extractions) == 2
    assert await ComposedDigester(ExtractiveSummarizer(), RuleBasedEntityExtractor()).digest(
        ask(summary=False, entities=False)) == type(digest)(None)


async def test_the_digest_asks_that_a_correction_take_the_type_and_plain_value_of_the_fact_it_corrects() -> None:
    model = ScriptedModel([[ModelChunk(tool_calls=(ToolCall("c1", DIGEST_TOOL, {"summary": "S."}),))]])
    await LLMMemoryDigester(model).digest(ask())
    instructions = model.calls[0][0][0].text
    for words in ("now", "no longer", "just turned", "现在", "已经", "搬到", "不再"):
        assert words in instructions, words
    assert "reuse the type the known facts give it" in instructions
    assert "(manager, partner, doctor) is one type" in instructions
    assert '"no longer <old value>"' in instructions
    assert "without the words of its change" in instructions
