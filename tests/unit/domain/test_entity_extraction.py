"""Reading an extractor's untrusted output: malformed parts are dropped and named, never stored."""

from __future__ import annotations

import pytest

from domain.memory.entities import EntityScope
from domain.memory.entity_extraction import MAX_ENTITIES, ExtractedEntity, read_extraction


def test_a_well_formed_output_is_read_with_normalised_types() -> None:
    read = read_extraction(
        {"intent": "book", "entities": [{"type": "Date", "value": " the day  after tomorrow ", "confidence": 0.9}]}
    )
    assert read.intent == "book"
    assert read.entities == (ExtractedEntity("date", "the day after tomorrow", 0.9),)
    assert read.problems == ()


def test_json_text_is_accepted() -> None:
    read = read_extraction('{"intent": "x", "entities": [{"type": "city", "value": "Porto", "confidence": 1}]}')
    assert read.entities == (ExtractedEntity("city", "Porto", 1.0, EntityScope.USER),)


@pytest.mark.parametrize(
    ("payload", "problem"),
    [
        ("not json at all", "not JSON"),
        ("[1, 2]", "not an object"),
        (42, "not an object"),
        (None, "not an object"),
        ({"intent": "x"}, "entities is missing"),
        ({"intent": "x", "entities": "city=Porto"}, "entities is missing or not a list"),
    ],
)
def test_an_unreadable_output_yields_nothing_and_says_why(payload: object, problem: str) -> None:
    read = read_extraction(payload)
    assert read.entities == ()
    assert any(problem in p for p in read.problems)


@pytest.mark.parametrize(
    ("item", "problem"),
    [
        ("city=Porto", "not an object"),
        ({"type": 3, "value": "Porto", "confidence": 0.9}, "type is not a string"),
        ({"type": "city", "value": ["Porto"], "confidence": 0.9}, "value is not a string"),
        ({"type": "city", "value": True, "confidence": 0.9}, "value is not a string"),
        ({"type": "city", "value": "Porto", "confidence": "high"}, "confidence is not a number"),
        ({"type": "city", "value": "Porto", "confidence": True}, "confidence is not a number"),
        ({"type": "city", "value": "Porto"}, "confidence is not a number"),
        ({"type": "city", "value": "Porto", "confidence": 1.5}, "outside 0..1"),
        ({"type": "city", "value": "Porto", "confidence": -0.1}, "outside 0..1"),
        ({"type": "city", "value": "Porto", "confidence": float("nan")}, "outside 0..1"),
        ({"type": "city", "value": "   ", "confidence": 0.9}, "value is empty"),
        ({"type": "!!", "value": "Porto", "confidence": 0.9}, "entity type"),
        ({"type": "city", "value": "x" * 501, "confidence": 0.9}, "longer than"),
    ],
)
def test_a_malformed_entity_is_dropped_and_the_others_kept(item: object, problem: str) -> None:
    good = {"type": "name", "value": "Ada", "confidence": 0.95}
    read = read_extraction({"intent": "x", "entities": [item, good]})
    assert read.entities == (ExtractedEntity("name", "Ada", 0.95, EntityScope.USER),)
    assert len(read.problems) == 1
    assert problem in read.problems[0]


def test_a_number_value_is_read_as_text() -> None:
    read = read_extraction({"entities": [{"type": "age", "value": 34, "confidence": 0.9}]})
    assert read.entities == (ExtractedEntity("age", "34", 0.9, EntityScope.USER),)


def test_a_wrong_intent_is_dropped_but_the_entities_kept() -> None:
    read = read_extraction({"intent": ["book"], "entities": [{"type": "a", "value": "b", "confidence": 0.8}]})
    assert read.intent == ""
    assert len(read.entities) == 1
    assert read.problems


def test_one_value_per_type_the_most_confident() -> None:
    read = read_extraction({"entities": [
        {"type": "date", "value": "monday", "confidence": 0.6},
        {"type": "date", "value": "friday", "confidence": 0.9},
        {"type": "date", "value": "sunday", "confidence": 0.7},
    ]})
    assert read.entities == (ExtractedEntity("date", "friday", 0.9),)


def test_too_many_entities_are_cut() -> None:
    items = [{"type": f"t{n}", "value": "v", "confidence": 0.9} for n in range(MAX_ENTITIES + 3)]
    read = read_extraction({"entities": items})
    assert len(read.entities) == MAX_ENTITIES
    assert read.problems
