"""The junk guard on extracted entity values: no content word, or only the question repeated."""

from __future__ import annotations

import pytest

from domain.memory.entity_extraction import ExtractedEntity, Extraction, content_words, junk_problem, without_junk


@pytest.mark.parametrize("value", ["it", "the one", "？", "...", "something", "我的", "what's that"])
def test_a_value_without_a_content_word_is_junk(value: str) -> None:
    assert junk_problem(value, "My dog is called Rex.") == "holds no content word"


@pytest.mark.parametrize(
    ("value", "query"),
    [("my name", "What is my name?"), ("What's my name", "what's my name?"), ("名字", "我的名字是什么？")],
)
def test_a_value_that_only_repeats_the_question_is_junk(value: str, query: str) -> None:
    assert junk_problem(value, query) == "only repeats the question"


@pytest.mark.parametrize(
    ("value", "query"),
    [
        ("Ada", "My name is Ada."),
        ("Ada", "I'm Ada, what's the weather?"),
        ("42", "How old am I? I'm 42."),
        ("Rex", "my pet Rex needs a walk"),
        ("北京", "我住在北京"),
        ("name", "My name is name."),  # a statement, not a question: kept
    ],
)
def test_a_value_that_states_something_is_kept(value: str, query: str) -> None:
    assert junk_problem(value, query) == ""


def test_content_words_fold_case_and_drop_function_words_and_han_particles() -> None:
    assert content_words("The CITY of Paris!") == {"city", "paris"}
    assert content_words("我的狗叫Rex") == {"狗", "叫", "rex"}


def test_junk_is_dropped_from_an_extraction_and_named_in_its_problems() -> None:
    extraction = Extraction("chat", (ExtractedEntity("name", "my name", 0.9), ExtractedEntity("city", "Paris", 0.9)))

    kept = without_junk(extraction, "What is my name, and do you know Paris?")

    assert [e.type for e in kept.entities] == ["name", "city"]
    junk = without_junk(extraction, "what is my name?")
    assert [e.type for e in junk.entities] == ["city"]
    assert junk.problems == ("name 'my name' only repeats the question",)
