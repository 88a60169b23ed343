from __future__ import annotations

import pytest

from domain.text import storable, storable_value, text_problem


@pytest.mark.parametrize(
    ("text", "problem"),
    [("plain", ""), ("emoji 😀 and 中文", ""), ("half \ud83d", "surrogate pair at position 5"), ("a\x00b", "NUL")],
)
def test_text_problem_names_what_no_store_can_hold(text: str, problem: str) -> None:
    found = text_problem(text)
    assert (problem in found) if problem else found == ""


def test_storable_replaces_half_pairs_and_nuls_and_keeps_everything_else() -> None:
    assert storable("emoji 😀 中文") == "emoji 😀 中文"
    assert storable("half \ud83d, other half \ude00, nul \x00") == "half \ufffd, other half \ufffd, nul \ufffd"
    assert storable("\ud83d\ude00") == "😀"  # a whole pair that arrived as two halves is one character


def test_storable_value_cleans_nested_strings_and_turns_non_finite_numbers_into_text() -> None:
    value = {"k\x00": ["a\ud83d", {"n": float("nan"), "i": float("-inf"), "ok": 1.5, "b": True, "none": None}]}
    assert storable_value(value) == {
        "k\ufffd": ["a\ufffd", {"n": "nan", "i": "-inf", "ok": 1.5, "b": True, "none": None}]
    }
