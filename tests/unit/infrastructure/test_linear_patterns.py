"""No ReDoS (issue 14), the parts that need no clock: the growth benchmark finds every pattern and
judges growth as it says, and the linear rewrites of patterns match what the old ones matched.
How the patterns' CPU time grows is measured by tests/bench/regex_growth.py, which
tests/integration/test_regex_growth_bench.py runs."""

from __future__ import annotations

import re

import pytest

from infrastructure.memory import entity_patterns, rule_entity_extractor
from tests.bench.regex_growth import CAP_MS, FLOOR_MS, GROWTH_LIMIT, PATTERNS, SIZE, adversarial, is_superlinear


def test_the_modules_patterns_are_all_found() -> None:
    assert len(PATTERNS) >= 30
    assert {"infrastructure.memory.entity_patterns.EMAIL", "infrastructure.memory.rule_entity_extractor._DENIAL",
            "infrastructure.memory.extractive_summarizer._CUES",
            "infrastructure.memory.llm_memory_models._FENCE"} <= set(PATTERNS)


def test_the_adversarial_texts_are_at_most_their_size() -> None:
    texts = adversarial(SIZE)
    assert len(texts) >= 40
    assert all(SIZE * 0.9 <= len(text) <= SIZE for text in texts.values())


@pytest.mark.parametrize(
    ("small_ms", "whole_ms", "superlinear"),
    [
        (0.05, FLOOR_MS, False),  # any growth within the floor
        (0.05, FLOOR_MS + 1, True),  # past the floor, growing 500 times
        (1.5, 16 * 1.5 * 4, False),  # linear, four times slower on the whole
        (2.0, 256 * 2.0, True),  # quadratic
        (GROWTH_LIMIT, CAP_MS + 1, True),  # past the cap, however linear
    ],
)
def test_a_job_is_superlinear_past_the_floor_and_the_growth_limit_or_past_the_cap(
    small_ms: float, whole_ms: float, superlinear: bool
) -> None:
    assert is_superlinear(small_ms, whole_ms) is superlinear


def test_a_long_sentence_is_read_within_its_bound_after_its_last_whole_word() -> None:
    long = "My name is Ada. " + "word " * 400
    assert rule_entity_extractor.bounded(long).endswith("word")
    assert len(rule_entity_extractor.bounded(long)) <= rule_entity_extractor.MAX_SENTENCE
    assert rule_entity_extractor.bounded("short one") == "short one"


@pytest.mark.parametrize(
    ("text", "emails"),
    [
        ("write to ada@example.org or to bob.smith+x@mail.example.co.uk!", ["ada@example.org",
                                                                            "bob.smith+x@mail.example.co.uk"]),
        ("-ada@example.org", ["-ada@example.org"]),
        ("no address here, just @ and x.y", []),
    ],
)
def test_the_linear_email_pattern_finds_what_the_old_one_found(text: str, emails: list[str]) -> None:
    old = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
    assert entity_patterns.EMAIL.findall(text) == old.findall(text) == emails


@pytest.mark.parametrize(
    "text",
    ["I like cats.", "I like  . cats", "I like  ", "I like green tea , and so on", "I like it,but no",
     "I like a   b c .", "I like x, and I like y; I like z", "I like \t tabs\t"],
)
def test_the_linear_clause_pattern_matches_as_the_old_one_did(text: str) -> None:
    old = re.compile(r"\bI (?:like) (.+?)\s*(?:[.!?;]|,\s*(?:and|but|so)\b|$)")
    new = re.compile(r"\bI (?:like) " + entity_patterns.CLAUSE)
    assert [m.span(1) for m in new.finditer(text)] == [m.span(1) for m in old.finditer(text)]
