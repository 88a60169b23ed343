"""Each extracted entity's scope (a lasting fact about the user, or this conversation's task state)
and whether the user stated it outright: the type → scope table, and how untrusted output sets them."""

from __future__ import annotations

import pytest

from domain.memory.entities import EntityScope
from domain.memory.entity_extraction import ExtractedEntity, Extraction, default_scope, read_extraction, without_junk

USER, CONVERSATION = EntityScope.USER, EntityScope.CONVERSATION


def one(**fields: object) -> dict[str, object]:
    return {"intent": "x", "entities": [{"type": "city", "value": "Porto", "confidence": 0.9, **fields}]}


@pytest.mark.parametrize(
    "kind",
    ["name", "email", "phone", "city", "hometown", "job", "employer", "diet", "allergy", "likes", "dislikes",
     "preference", "age", "birthday", "language", "family", "pets", "dog_name", "wife_birthday",
     "favourite_colour", "favorite_food", "preferred_airline", "seat_preference", "Favourite Colour"],
)
def test_lasting_facts_about_the_person_are_user_scoped(kind: str) -> None:
    assert default_scope(kind) is USER


@pytest.mark.parametrize(
    "kind", ["date", "destination", "intent", "task", "time", "number_of_people", "restaurant_name", "flight", "zz"]
)
def test_the_task_at_hand_and_unknown_types_are_conversation_scoped(kind: str) -> None:
    assert default_scope(kind) is CONVERSATION


@pytest.mark.parametrize("kind", ["car", "coffee_order", "gym_class", "blood_type", "wedding_anniversary", "车"])
def test_a_thing_the_user_calls_theirs_is_user_scoped(kind: str) -> None:
    assert default_scope(kind, owned=True) is USER


@pytest.mark.parametrize(
    "kind", ["booking", "reservation", "flight", "meeting", "appointment", "order_number", "table", "ticket",
             "deadline", "destination", "date", "time", "trip", "trip_to_rome", "hotel_name", "flights", "航班",
             "酒店地址", "task"],
)
def test_a_thing_the_user_calls_theirs_is_conversation_scoped_when_it_is_task_state(kind: str) -> None:
    assert default_scope(kind, owned=True) is CONVERSATION


@pytest.mark.parametrize("kind", ["coffee_order", "seat_preference", "favourite_time", "birthday", "time_zone"])
def test_the_user_fact_table_wins_over_a_task_noun_in_the_type(kind: str) -> None:
    assert default_scope(kind) is USER
    assert default_scope(kind, owned=True) is USER


@pytest.mark.parametrize("kind", ["plays", "learning", "supports", "saving_for", "kitten_name", "puppy_name"])
def test_the_pursuit_and_pet_types_are_user_facts_by_the_table(kind: str) -> None:
    assert default_scope(kind) is USER


def test_a_stated_scope_and_explicit_flag_are_read() -> None:
    read = read_extraction(one(scope="conversation", explicit=True))
    assert read.entities == (ExtractedEntity("city", "Porto", 0.9, CONVERSATION, explicit=True),)
    assert read.problems == ()


def test_an_absent_scope_is_the_types_and_an_absent_explicit_is_false() -> None:
    read = read_extraction({"entities": [
        {"type": "city", "value": "Porto", "confidence": 0.9},
        {"type": "date", "value": "friday", "confidence": 0.9, "scope": None, "explicit": None},
    ]})
    assert read.entities == (
        ExtractedEntity("city", "Porto", 0.9, USER, explicit=False),
        ExtractedEntity("date", "friday", 0.9, CONVERSATION, explicit=False),
    )
    assert read.problems == ()


def test_a_scope_is_read_whatever_its_case() -> None:
    assert read_extraction(one(scope=" User ")).entities[0].scope is USER


@pytest.mark.parametrize("scope", ["forever", "", 3, ["user"]])
def test_an_invalid_scope_drops_nothing_falls_back_to_the_table_and_is_named(scope: object) -> None:
    read = read_extraction(one(scope=scope))
    assert read.entities == (ExtractedEntity("city", "Porto", 0.9, USER),)
    [problem] = read.problems
    assert problem.startswith("entity 0: scope")
    assert "neither user nor conversation" in problem


@pytest.mark.parametrize("explicit", ["true", 1, 0.0, {"yes": True}])
def test_a_non_boolean_explicit_is_named_and_taken_as_false(explicit: object) -> None:
    read = read_extraction(one(explicit=explicit))
    assert read.entities == (ExtractedEntity("city", "Porto", 0.9, USER, explicit=False),)
    [problem] = read.problems
    assert "explicit is a" in problem
    assert "not a boolean" in problem


def test_a_bad_scope_on_a_dropped_entity_names_only_why_it_was_dropped() -> None:
    read = read_extraction({"entities": [{"type": "city", "value": "", "confidence": 0.9, "scope": "forever"}]})
    assert read.entities == ()
    assert read.problems == ("entity 0: value is empty",)


def test_the_junk_guard_keeps_scope_and_explicit_on_the_kept_entities() -> None:
    extraction = Extraction("chat", (
        ExtractedEntity("name", "my name", 0.9, USER, explicit=True),
        ExtractedEntity("city", "Paris", 0.9, USER, explicit=True),
        ExtractedEntity("date", "friday", 0.6, CONVERSATION, explicit=False),
    ))
    kept = without_junk(extraction, "what is my name?")
    assert kept.entities == extraction.entities[1:]
