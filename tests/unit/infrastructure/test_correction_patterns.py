"""The offline extractor reads a correction into the slot of the fact it corrects, with the value alone:
the changes of issue 35 (a move, a job, a preference, a diet, an age, a number, a car, a manager),
in English and Chinese."""

from __future__ import annotations

from datetime import date

import pytest

from domain.memory.entity_extraction import read_extraction
from infrastructure.memory.rule_entity_extractor import extraction


def facts(query: str) -> dict[str, str]:
    read = read_extraction(extraction(query, date(2026, 1, 1)))
    return {e.type: e.value for e in read.entities}


@pytest.mark.parametrize(
    ("statement", "correction", "slot", "latest"),
    [("I live in Lisbon.", "I've just moved to Porto.", "city", "Porto"),
     ("I'm based in Porto.", "I live in Vienna now.", "city", "Vienna"),
     ("I work as a nurse.", "I am a teacher now.", "job", "teacher"),
     ("I'm an architect.", "I'm working as a software engineer these days.", "job", "software engineer"),
     ("I work at Acme Corp.", "I work at Globex now.", "employer", "Globex"),
     ("I work for Globex.", "I've joined Northwind Labs.", "employer", "Northwind Labs"),
     ("My favourite colour is blue.", "My favourite colour is green now.", "favourite_colour", "green"),
     ("I prefer tea.", "I prefer coffee now.", "preference", "coffee"),
     ("I'm vegetarian.", "I am no longer vegetarian.", "diet", "no longer vegetarian"),
     ("I am vegan.", "I'm not vegan anymore.", "diet", "no longer vegan"),
     ("I'm 34.", "I just turned 35.", "age", "35"),
     ("My phone number is +1 415 555 0134.", "My new number is +44 20 7946 0958.", "phone", "+44 20 7946 0958"),
     ("My car is a Fiat Panda.", "I drive a Renault Zoe now.", "car", "Renault Zoe"),
     ("My manager is called Bruno.", "My new manager is called Carla.", "manager", "Carla"),
     ("My boss is Maria.", "Kenji is my manager now.", "manager", "Kenji"),
     ("My manager is Kenji.", "I have a new boss called Olga.", "manager", "Olga"),
     ("My partner's name is Jonas.", "I split up with Jonas; my partner now is Elena.", "partner", "Elena"),
     ("My GP is Dr Okafor.", "Dr Moreau is my new GP.", "doctor", "Dr Moreau"),
     ("My name is Anna Schmidt.", "I got married, my name is Anna Weber now.", "name", "Anna Weber"),
     ("我住在上海。", "我搬到杭州了。", "city", "杭州"),
     ("我的工作是医生。", "我现在的工作是律师。", "job", "律师"),
     ("我是一名护士。", "我换工作了，现在是工程师。", "job", "工程师"),
     ("我在阿里巴巴工作。", "我已经跳槽到腾讯了。", "employer", "腾讯"),
     ("我今年34岁。", "我已经35岁了。", "age", "35"),
     ("我是素食者。", "我不再是素食者了。", "diet", "不再是素食者"),
     ("我的电话号码是13800138000。", "我换号码了，现在是13912345678。", "phone", "13912345678"),
     ("我的车是比亚迪。", "我换车了，现在开特斯拉。", "car", "特斯拉"),
     ("我的经理是王伟。", "我的新经理是李娜。", "manager", "李娜"),
     ("我最喜欢的颜色是蓝色。", "我最喜欢的颜色已经变成绿色了。", "favourite_colour", "绿色"),
     ("我的邮箱是lin@example.cn。", "我换邮箱了，现在用zhao@example.com。", "email", "zhao@example.com")],
)
def test_a_correction_lands_in_the_slot_of_the_fact_it_corrects_with_the_value_alone(
    statement: str, correction: str, slot: str, latest: str
) -> None:
    assert slot in facts(statement)
    assert facts(correction) == {slot: latest}


@pytest.mark.parametrize(
    "query",
    ["This is my manager, Kenji.", "I'm not a teacher.", "I drive a lot.", "我在家工作。", "I'm a big fan.",
     "I'm no longer sure.", "我不是素食者。"],
)
def test_no_fact_from_the_change_patterns_in_chatter_or_a_plain_negation(query: str) -> None:
    assert facts(query) == {}
