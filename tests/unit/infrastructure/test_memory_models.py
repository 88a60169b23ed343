"""The memory upkeep's model work: offline (extractive, rule-based) and over a ChatModel."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from application.ports.chat_model import ModelChunk
from domain.agents.config import ModelCapabilities
from domain.ids import MessageId
from domain.memory.entity_extraction import read_extraction
from domain.memory.summary import SummaryLimit
from domain.memory.window import Exchange
from domain.tools.calls import ToolCall
from infrastructure.memory.extractive_summarizer import ExtractiveSummarizer, salience
from infrastructure.memory.llm_memory_models import EXTRACTION_TOOL, LLMEntityExtractor, LLMSummarizer
from infrastructure.memory.rule_entity_extractor import RuleBasedEntityExtractor
from tests.fakes import ScriptedModel

AT = datetime(2026, 1, 1, 9, 0, tzinfo=UTC)  # a Thursday


def ex(query: str, answer: str = "(scripted answer)", n: int = 1) -> Exchange:
    return Exchange(MessageId(f"m{n}"), query, answer, AT)


async def found(query: str) -> dict[str, tuple[str, float]]:
    read = read_extraction(await RuleBasedEntityExtractor().extract(ex(query)))
    assert read.problems == ()
    return {e.type: (e.value, e.confidence) for e in read.entities}


# --- the extractive summariser ----------------------------------------------------------------


@pytest.mark.parametrize("sentence", ["Hi!", "thanks", "ok cool", "What is my favourite colour?", "lol"])
def test_small_talk_and_questions_are_not_summarised(sentence: str) -> None:
    assert salience(sentence) == 0


@pytest.mark.parametrize(
    "sentence", ["My name is Ada.", "Remind me to renew my passport.", "Can you remind me to call Marta?"]
)
def test_facts_and_tasks_are_summarised(sentence: str) -> None:
    assert salience(sentence) > 0


@pytest.mark.parametrize(
    "sentence",
    ["Tell me a fun fact about octopuses.", "Give me three questions to ask an expert on ancient Egypt.",
     "Summarise what makes the Roman empire interesting in two sentences.", "Summarize the history of jazz.",
     "Explain black holes simply.", "List the planets in order.", "Write a haiku about glaciers.",
     "Translate this into French.", "Show me how origami cranes are folded.", "Can you explain tidal energy.",
     "Could you describe Kyoto in winter.", "Please give me 3 facts about Lisbon.", "Hi, tell me about Oslo.",
     "ok so recommend a novel about typography."],
)
def test_a_request_to_the_assistant_is_not_summarised(sentence: str) -> None:
    assert salience(sentence) == 0


@pytest.mark.parametrize(
    "sentence",
    ["Write a poem for my mum's birthday.", "Can you book a table for Friday.", "Please remind me to call Marta.",
     "Tell me what to cook, I'm vegetarian.", "Could you note that I prefer aisle seats."],
)
def test_a_request_holding_a_fact_or_task_cue_is_summarised(sentence: str) -> None:
    assert salience(sentence) > 0


async def test_a_summary_of_requests_and_facts_keeps_only_the_facts() -> None:
    text = await ExtractiveSummarizer().condense(
        [ex("Tell me a fun fact about volcanoes."), ex("My car is a red Fiat Panda."),
         ex("Give me three questions to ask an expert on honeybees."), ex("I play the cello in an orchestra.")],
        SummaryLimit(),
    )
    assert text == "My car is a red Fiat Panda. I play the cello in an orchestra."


async def test_an_update_replaces_an_older_our_x_is_sentence() -> None:
    text = await ExtractiveSummarizer().update(
        "Our wedding anniversary is on September 12.", [ex("Sorry, our wedding anniversary is on September 21.")],
        SummaryLimit(),
    )
    assert text == "Sorry, our wedding anniversary is on September 21."


async def test_an_archive_summary_keeps_the_users_facts_and_drops_small_talk() -> None:
    text = await ExtractiveSummarizer().condense(
        [ex("Hi! My name is Ada."), ex("ok cool"), ex("Remind me to renew my passport before June. How are you?")],
        SummaryLimit(),
    )
    assert text == "My name is Ada. Remind me to renew my passport before June."


async def test_an_update_replaces_an_older_my_x_is_sentence() -> None:
    text = await ExtractiveSummarizer().update(
        "My favourite colour is teal. I live in Porto.", [ex("Actually my favourite colour is green.")], SummaryLimit()
    )
    assert text == "I live in Porto. Actually my favourite colour is green."


async def test_the_summary_keeps_the_most_salient_sentences_within_the_bound() -> None:
    text = await ExtractiveSummarizer().update(
        "The trip was long.", [ex("My name is Ada and my email is ada@example.org."), ex("It rained a bit.")],
        SummaryLimit(max_words=10),
    )
    assert text == "My name is Ada and my email is ada@example.org."
    assert SummaryLimit(max_words=10).fits(text)


async def test_nothing_worth_keeping_summarises_to_nothing() -> None:
    assert await ExtractiveSummarizer().update("", [ex("hello"), ex("thanks")], SummaryLimit()) == ""


async def test_cjk_sentences_are_kept_within_the_character_bound() -> None:
    text = await ExtractiveSummarizer().condense([ex("我叫小明。我住在北京。你好")], SummaryLimit(max_cjk_chars=12))
    assert text == "我叫小明。我住在北京。"


# --- the rule-based extractor -----------------------------------------------------------------


async def test_name_and_city() -> None:
    assert await found("Hi, my name is Ada Lovelace and I live in Lisbon.") == {
        "name": ("Ada Lovelace", 0.95), "city": ("Lisbon", 0.9),
    }


@pytest.mark.parametrize(
    "query", ["I moved to Hangzhou last month.", "I moved to Hangzhou recently.", "I moved to Hangzhou in 2020.",
              "I moved to Hangzhou two years ago, and I love it.", "I'm moving to Hangzhou next week.",
              "I live in Hangzhou."],
)
async def test_a_time_phrase_after_the_city_is_not_the_city(query: str) -> None:
    assert await found(query) == {"city": ("Hangzhou", 0.9)}


async def test_a_negation_in_an_earlier_clause_negates_nothing_after_it() -> None:
    assert await found("I'm not vegan but I'm vegetarian.") == {"diet": ("vegetarian", 0.9)}
    assert await found("No I live in Porto.") == {"city": ("Porto", 0.9)}


async def test_a_later_date_correction_is_a_new_date() -> None:
    assert await found("Book a table for tomorrow.") == {"date": ("tomorrow (2026-01-02)", 0.85)}
    assert await found("Actually, make it the day after tomorrow.") == {
        "date": ("the day after tomorrow (2026-01-03)", 0.85)
    }


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("My favourite colour is teal.", {"favourite_colour": ("teal", 0.9)}),
        ("My dog's name is Rex.", {"dog_name": ("Rex", 0.9)}),
        ("My email is ada@example.org", {"email": ("ada@example.org", 0.98)}),
        ("My phone number is +33 6 12 34 56 78.", {"phone": ("+33 6 12 34 56 78", 0.9)}),
        ("I prefer window seats.", {"preference": ("window seats", 0.85)}),
        ("I love jazz piano.", {"likes": ("jazz piano", 0.8)}),
        ("I hate cilantro.", {"dislikes": ("cilantro", 0.8)}),
        ("I'm vegetarian.", {"diet": ("vegetarian", 0.9)}),
        ("I'm allergic to peanuts.", {"allergy": ("peanuts", 0.9)}),
        ("I am 34 years old.", {"age": ("34", 0.9)}),
        ("I work as a nurse.", {"job": ("nurse", 0.85)}),
        ("I work at Acme Corp.", {"employer": ("Acme Corp", 0.85)}),
        ("I'm from Marseille, originally.", {"hometown": ("Marseille", 0.85)}),
        ("Remind me to renew my passport.", {"task": ("renew my passport", 0.8)}),
        ("My birthday is on May 3rd.", {"birthday": ("on May 3rd", 0.9)}),
        ("Let's meet next Friday.", {"date": ("next Friday (2026-01-02)", 0.85)}),
        ("The meeting is in 3 days.", {"date": ("in 3 days (2026-01-04)", 0.85)}),
        ("Book it for 2026-02-14.", {"date": ("2026-02-14 (2026-02-14)", 0.85)}),
        ("我叫小明，我住在北京。", {"name": ("小明", 0.95), "city": ("北京", 0.9)}),
        ("I'm Spanish.", {"name": ("Spanish", 0.6)}),
        ("Nice weather today, isn't it.", {"date": ("today (2026-01-01)", 0.6)}),
        ("Is it going to rain tomorrow?", {"date": ("tomorrow (2026-01-02)", 0.5)}),
        ("My car is a red Fiat Panda.", {"car": ("red Fiat Panda", 0.9)}),
        ("My blood type is O negative.", {"blood_type": ("O negative", 0.9)}),
        ("Our wedding anniversary is on September 12.", {"wedding_anniversary": ("on September 12", 0.85)}),
        ("I play the cello in a community orchestra.", {"plays": ("cello", 0.85)}),
        ("I play tennis with my brother.", {"plays": ("tennis", 0.85)}),
        ("I'm learning Japanese in the evenings.", {"learning": ("Japanese", 0.85)}),
        ("I am studying Brazilian Portuguese.", {"learning": ("Brazilian Portuguese", 0.85)}),
        ("I support Benfica.", {"supports": ("Benfica", 0.85)}),
        ("I'm a huge fan of Radiohead.", {"supports": ("Radiohead", 0.8)}),
        ("We adopted a cat called Miso last spring.", {"cat_name": ("Miso", 0.85)}),
        ("Our new puppy named Rex Junior is great.", {"puppy_name": ("Rex Junior", 0.85)}),
        ("I'm saving up for a trip to Patagonia.", {"saving_for": ("trip to Patagonia", 0.8)}),
        ("我的车是红色的菲亚特。", {"car": ("红色的菲亚特", 0.85)}),
        ("我最喜欢的城市是成都。", {"favourite_city": ("成都", 0.85)}),
        ("我的名字是林美。", {"name": ("林美", 0.95)}),
    ],
)
async def test_documented_patterns(query: str, expected: dict[str, tuple[str, float]]) -> None:
    assert await found(query) == expected


@pytest.mark.parametrize(
    "query",
    ["What is my favourite colour?", "My car is not red.", "my point is that it works", "I like it.", "I'm tired",
     "ok cool", "I don't think my car is red.", "I don't play the cello.", "I never had a cat called Miso.",
     "I have no dog named Rex.", "Our car isn't red.", "我的车不是红色的。", "我的生日是什么时候", "I play it safe.",
     "I'm learning a lot.", "I'm not saving up for a car."],
)
async def test_no_entities_in_questions_negations_and_chatter(query: str) -> None:
    assert await found(query) == {}


@pytest.mark.parametrize(
    ("query", "intent"),
    [("What is my name?", "ask"), ("Actually, make it friday.", "correct"), ("Remind me to call Bo.", "task"),
     ("My name is Ada.", "inform"), ("thanks", "small_talk"), ("The sky is blue", "chat")],
)
async def test_intents(query: str, intent: str) -> None:
    assert read_extraction(await RuleBasedEntityExtractor().extract(ex(query))).intent == intent


# --- over a ChatModel -------------------------------------------------------------------------


async def test_the_llm_summariser_sends_the_old_summary_the_exchanges_and_the_bound() -> None:
    model = ScriptedModel([[ModelChunk(text="Ada lives "), ModelChunk(text="in Porto. ")]])
    text = await LLMSummarizer(model).update("Ada likes tea.", [ex("I moved to Porto.")], SummaryLimit())
    assert text == "Ada lives in Porto."
    [(messages, tools)] = model.calls
    assert tools == []
    assert "at most 120 words" in messages[0].text
    assert "small talk" in messages[0].text
    assert "preferences" in messages[0].text
    assert "Ada likes tea." in messages[1].text
    assert "User: I moved to Porto." in messages[1].text


async def test_the_llm_archive_summary_asks_for_the_batch() -> None:
    model = ScriptedModel([[ModelChunk(text="They planned a trip.")]])
    assert await LLMSummarizer(model).condense([ex("a"), ex("b", n=2)], SummaryLimit()) == "They planned a trip."
    assert "User: a" in model.calls[0][0][1].text
    assert "User: b" in model.calls[0][0][1].text


async def test_the_llm_extractor_offers_one_tool_shaped_like_the_output() -> None:
    arguments: dict[str, Any] = {"intent": "book", "entities": [{"type": "date", "value": "friday", "confidence": 0.9}]}
    model = ScriptedModel([[ModelChunk(tool_calls=(ToolCall("c1", EXTRACTION_TOOL, arguments),))]])
    assert await LLMEntityExtractor(model).extract(ex("Book it for friday")) == arguments
    [(_, tools)] = model.calls
    [spec] = tools
    assert spec.name == EXTRACTION_TOOL
    item = spec.parameters["properties"]["entities"]["items"]
    assert item["required"] == ["type", "value", "confidence", "scope", "explicit"]
    assert item["properties"]["confidence"] == {"type": "number", "minimum": 0, "maximum": 1}


async def test_a_model_without_tools_is_asked_for_json_text_fenced_or_not() -> None:
    reply = '```json\n{"intent": "x", "entities": []}\n```'
    model = ScriptedModel([[ModelChunk(text=reply)]], ModelCapabilities(tool_call=False, agent_thought=True))
    assert await LLMEntityExtractor(model).extract(ex("hi")) == '{"intent": "x", "entities": []}'
    assert model.calls[0][1] == []
    assert "JSON object" in model.calls[0][0][0].text


async def test_a_model_that_answers_in_prose_yields_unreadable_output() -> None:
    model = ScriptedModel([[ModelChunk(text="The user wants a table.")]])
    payload = await LLMEntityExtractor(model).extract(ex("hi"))
    assert read_extraction(payload).problems == ("the output is not JSON",)
