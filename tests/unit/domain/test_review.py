"""Keyword review of a turn's input and output."""

from __future__ import annotations

import pytest

from domain.agents.review import KeywordReview


def test_a_hit_returns_the_keyword_as_configured() -> None:
    review = KeywordReview(keywords=("Forbidden",))
    assert review.hit("this text holds a forbidden word") == "Forbidden"


@pytest.mark.parametrize("text", ["BOMB", "bomb", "a Bomb here", "bOmBastic"])
def test_matching_ignores_case(text: str) -> None:
    assert KeywordReview(keywords=("bomb",)).hit(text) == "bomb"


def test_matching_ignores_case_beyond_ascii() -> None:
    assert KeywordReview(keywords=("straße",)).hit("DIE STRASSE") == "straße"


def test_no_hit_gives_none() -> None:
    assert KeywordReview(keywords=("bomb", "virus")).hit("what a lovely day") is None


def test_no_keywords_never_hit() -> None:
    assert KeywordReview().hit("anything at all") is None


@pytest.mark.parametrize("blank", ["", " ", "\t\n"])
def test_blank_keywords_are_ignored(blank: str) -> None:
    review = KeywordReview(keywords=(blank,))
    assert review.hit("any text with spaces\tand\ttabs\n") is None
    assert review.hit("") is None


def test_blank_keywords_do_not_hide_real_ones() -> None:
    assert KeywordReview(keywords=("", "  ", "virus")).hit("a VIRUS warning") == "virus"


def test_the_first_configured_keyword_found_is_returned() -> None:
    review = KeywordReview(keywords=("alpha", "beta"))
    assert review.hit("beta then alpha") == "alpha"


def test_empty_text_never_hits() -> None:
    assert KeywordReview(keywords=("x",)).hit("") is None


def test_a_review_has_a_preset_response() -> None:
    assert KeywordReview().preset_response
    assert KeywordReview(preset_response="No.").preset_response == "No."


@pytest.mark.parametrize(("text", "held"), [
    ("the launch co", 9),  # "launch co" may become "launch code"
    ("the LAUNCH", 6),
    ("the l", 1),
    ("the plan", 0),  # nothing at its end begins a keyword: nothing waits
    ("", 0),
])
def test_the_end_that_could_begin_a_keyword_is_held_and_never_more_than_the_longest_less_one(
    text: str, held: int
) -> None:
    review = KeywordReview(keywords=("launch code", "code red"))
    assert review.held(text) == held
    assert review.held(text) <= review.longest - 1


def test_without_keywords_nothing_is_held() -> None:
    assert KeywordReview().held("the launch co") == 0


def test_a_keyword_that_casefolds_longer_is_held_and_caught_across_chunks() -> None:
    review = KeywordReview(keywords=("straße",))  # matched as "strasse": 7 characters, not 6
    assert review.held("xSTRASS") == 6
    text = "xSTRASSE done"
    assert review.hit(text[max(0, len("xSTRASS") - review.longest + 1):]) == "straße"
