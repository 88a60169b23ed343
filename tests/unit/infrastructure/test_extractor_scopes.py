"""The extractors give each entity a scope and an explicit flag: the rule set from the type table
and the pattern's strength, the LLM as asked by its prompt and tool schema."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from application.ports.chat_model import ModelChunk
from domain.agents.config import ModelCapabilities
from domain.ids import MessageId
from domain.memory.entities import EntityScope
from domain.memory.entity_extraction import default_scope, read_extraction
from domain.memory.window import Exchange
from infrastructure.memory.entity_patterns import PATTERNS
from infrastructure.memory.llm_memory_models import EXTRACTION_SPEC, LLMEntityExtractor
from infrastructure.memory.rule_entity_extractor import RuleBasedEntityExtractor
from tests.fakes import ScriptedModel

AT = datetime(2026, 1, 1, 9, 0, tzinfo=UTC)  # a Thursday
USER, CONVERSATION = EntityScope.USER, EntityScope.CONVERSATION


def ex(query: str) -> Exchange:
    return Exchange(MessageId("m1"), query, "(scripted answer)", AT)


async def scoped(query: str) -> dict[str, tuple[EntityScope, bool]]:
    read = read_extraction(await RuleBasedEntityExtractor().extract(ex(query)))
    assert read.problems == ()
    return {e.type: (e.scope, e.explicit) for e in read.entities}


async def test_a_stated_name_and_liking_are_explicit_user_facts() -> None:
    assert await scoped("My name is Ada and I like teal") == {"name": (USER, True), "likes": (USER, True)}


async def test_a_booking_date_is_conversation_state_stated_outright() -> None:
    assert await scoped("book it for tomorrow") == {"date": (CONVERSATION, True)}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("I'm Ada", {"name": (USER, False)}),  # a capitalised word after "I'm" may not be a name
        ("Nice weather today.", {"date": (CONVERSATION, False)}),  # no scheduling word
        ("Is it going to rain tomorrow?", {"date": (CONVERSATION, False)}),  # a question
    ],
)
async def test_the_weak_patterns_are_not_explicit(query: str, expected: dict[str, tuple[EntityScope, bool]]) -> None:
    assert await scoped(query) == expected


@pytest.mark.parametrize(
    ("query", "kind"),
    [("My email is ada@example.org", "email"), ("I live in Lisbon.", "city"), ("I'm vegan.", "diet"),
     ("I'm allergic to peanuts.", "allergy"), ("I am 34 years old.", "age"), ("I work as a nurse.", "job"),
     ("I work at Acme.", "employer"), ("I prefer aisle seats.", "preference"), ("My dog's name is Rex.", "dog_name"),
     ("My favourite colour is teal.", "favourite_colour")],
)
async def test_direct_statements_of_lasting_facts_are_explicit_user_facts(query: str, kind: str) -> None:
    assert await scoped(query) == {kind: (USER, True)}


@pytest.mark.parametrize(
    ("query", "kind"),
    [("My car is a red Fiat Panda.", "car"), ("My coffee order is a flat white.", "coffee_order"),
     ("My gym class is on Thursday evenings.", "gym_class"), ("My blood type is O negative.", "blood_type"),
     ("Our wedding anniversary is on September 12.", "wedding_anniversary"), ("我的车是红色的菲亚特。", "car"),
     ("我最喜欢的城市是成都。", "favourite_city"), ("I play the cello.", "plays"),
     ("I'm learning Japanese.", "learning"), ("I support Benfica.", "supports"), ("I'm a fan of jazz.", "supports"),
     ("We have a cat called Miso.", "cat_name"), ("I'm saving up for a trip to Patagonia.", "saving_for")],
)
async def test_the_users_own_things_and_pursuits_are_explicit_user_facts(query: str, kind: str) -> None:
    assert await scoped(query) == {kind: (USER, True)}


@pytest.mark.parametrize(
    ("query", "kind"),
    [("My flight is at 9.", "flight"), ("My booking reference is XK42.", "booking_reference"),
     ("My order number is 1234.", "order_number"), ("Our table is by the window.", "table"),
     ("My trip to Rome is long.", "trip_to_rome"), ("我的航班是早上九点。", "航班")],
)
async def test_the_users_task_nouns_stay_conversation_state(query: str, kind: str) -> None:
    assert await scoped(query) == {kind: (CONVERSATION, True)}


def test_a_pattern_of_a_fixed_type_is_scoped_by_the_table_alone_not_as_the_users_own_thing() -> None:
    kinds = {kind for _, kind, _ in PATTERNS if "{}" not in kind}
    assert {kind for kind in kinds if default_scope(kind, owned=True) is not default_scope(kind)} == set()


async def test_a_task_is_conversation_state() -> None:
    assert await scoped("Remind me to renew my passport.") == {"task": (CONVERSATION, True)}


def test_the_tool_schema_asks_for_scope_and_explicit() -> None:
    item = EXTRACTION_SPEC.parameters["properties"]["entities"]["items"]
    assert item["properties"]["scope"]["enum"] == ["user", "conversation"]
    assert item["properties"]["explicit"]["type"] == "boolean"
    assert {"scope", "explicit"} <= set(item["required"])


@pytest.mark.parametrize("native", [True, False])
async def test_the_llm_prompt_defines_scope_and_explicit(native: bool) -> None:
    model = ScriptedModel([[ModelChunk(text='{"intent": "x", "entities": []}')]],
                          ModelCapabilities(tool_call=native, agent_thought=True))
    await LLMEntityExtractor(model).extract(ex("I'm vegetarian, book a table for tomorrow"))
    system = model.calls[0][0][0].text
    assert "scope" in system
    assert '"user"' in system
    assert '"conversation"' in system
    assert "lasting fact" in system
    assert "explicit" in system
    if not native:
        assert '"scope": "user", "explicit": true' in system


async def test_the_llm_output_with_scope_and_explicit_is_read() -> None:
    reply = ('{"intent": "book", "entities": [{"type": "diet", "value": "vegetarian", "confidence": 0.9, '
             '"scope": "user", "explicit": true}, {"type": "date", "value": "tomorrow", "confidence": 0.8, '
             '"scope": "conversation", "explicit": false}]}')
    model = ScriptedModel([[ModelChunk(text=reply)]], ModelCapabilities(tool_call=False, agent_thought=True))
    read = read_extraction(await LLMEntityExtractor(model).extract(ex("I'm vegetarian, book a table for tomorrow")))
    assert [(e.type, e.scope, e.explicit) for e in read.entities] == [
        ("diet", USER, True), ("date", CONVERSATION, False)
    ]
