"""One slot per fact (domain.memory.fact_slots): the words of a change name the fact it corrects, and its value
keeps none of them; read_extraction reads every extractor's types and user values so."""

from __future__ import annotations

import pytest

from domain.memory.entity_extraction import read_extraction
from domain.memory.fact_slots import fact_slot, plain_value


@pytest.mark.parametrize(
    ("kind", "slot"),
    [("new_manager", "manager"), ("boss", "manager"), ("boss_name", "manager"), ("manager_name", "manager"),
     ("current_employer", "employer"), ("company", "employer"), ("occupation", "job"), ("工作", "job"),
     ("partner_now", "partner"), ("partner_name", "partner"), ("spouse", "partner"), ("gp", "doctor"),
     ("family_doctor", "doctor"), ("new_email", "email"), ("mobile_number", "phone"), ("电话号码", "phone"),
     ("新号码", "phone"), ("现在的经理", "manager"), ("新车", "car"), ("favorite_color", "favourite_colour"),
     ("favourite_颜色", "favourite_colour"), ("favourite_城市", "favourite_city"), ("new_car", "car")],
)
def test_the_words_of_a_change_and_synonyms_name_one_slot(kind: str, slot: str) -> None:
    assert fact_slot(kind) == slot


@pytest.mark.parametrize("kind", ["dog_name", "sister_name", "restaurant_name", "新闻", "date", "flight_number"])
def test_other_types_keep_their_name(kind: str) -> None:
    assert fact_slot(kind) == kind


@pytest.mark.parametrize(
    ("value", "plain"),
    [("green now", "green"), ("called Carla", "Carla"), ("Dr Lindqvist now", "Dr Lindqvist"),
     ("Globex, now", "Globex"), ("Lea Braun from now on", "Lea Braun"), ("espresso these days", "espresso"),
     ("Apocalypse Now", "Apocalypse Now"), ("now", "now"), ("no longer vegetarian", "no longer vegetarian")],
)
def test_a_value_loses_the_words_of_its_change_but_never_its_own(value: str, plain: str) -> None:
    assert plain_value(value) == plain


def test_an_extractor_s_output_is_read_into_slots_with_plain_user_values() -> None:
    read = read_extraction({"intent": "inform", "entities": [
        {"type": "New manager", "value": "called Carla now", "confidence": 0.9, "scope": "user"},
        {"type": "task", "value": "call the bank now", "confidence": 0.9, "scope": "conversation"},
    ]})
    assert [(e.type, e.value) for e in read.entities] == [("manager", "Carla"), ("task", "call the bank now")]
