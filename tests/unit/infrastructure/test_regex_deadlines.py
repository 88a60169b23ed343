"""No ReDoS (issue 14): every regex the offline memory models apply to user or model text, and
their public functions on whole inputs, read 32 KiB of adversarial text in time linear in its size.

Each is timed (CPU time of this process, once to warm up, then the best of up to 3 runs) on the
text and on the same recipe at a quarter of the size. One within 5 ms passes; a slower one must
grow at most 8 times from the quarter to the whole (linear is 4, quadratic 16), and never pass
half a second. Both sizes are timed in the same moment, so a busy machine slows both alike.
"""

from __future__ import annotations

import gc
import re
import time
from collections.abc import Callable
from datetime import date
from functools import partial
from types import ModuleType

import pytest

from domain.memory_summary import SummaryLimit
from infrastructure.embeddings import lexical
from infrastructure.memory import entity_patterns, extractive_summarizer, llm_memory_models, rule_entity_extractor
from infrastructure.memory.extractive_summarizer import salience, select, sentences
from infrastructure.memory.rule_entity_extractor import extraction, intent_of, sentence_entities

FAST = 0.005  # seconds: fast enough whatever the growth
CAP = 0.5  # seconds: never, however linear
GROWTH = 8.0  # from a quarter of the size to the whole: linear is 4, quadratic 16
SIZE = 32 * 1024
TODAY = date(2026, 1, 1)


def adversarial(size: int) -> dict[str, str]:
    """The adversarial texts of at most `size` characters."""

    def run_of(unit: str, prefix: str = "", suffix: str = "") -> str:
        """`prefix`, then `unit` repeated up to `size` characters in all, then `suffix`."""
        room = size - len(prefix) - len(suffix)
        return prefix + unit * (room // len(unit)) + suffix

    return {
        "one long word": run_of("x"),
        "one long capitalised word": run_of("X"),
        "a long word of letters and digits": run_of("a1"),
        "repeated a-dot": run_of("a."),
        "repeated a-dot then an at sign": run_of("a.", suffix="@"),
        "at signs": run_of("@"),
        "x-at pairs": run_of("x@"),
        "an address with a long domain": run_of(".x", prefix="x@x", suffix="."),
        "hyphens": run_of("-"),
        "digits": run_of("1"),
        "digit-hyphen pairs": run_of("1-"),
        "a phone prefix then digits and spaces": run_of(" 1", prefix="+1", suffix="x"),
        "nested brackets": "(" * (size // 2) + ")" * (size // 2),
        "spaces": run_of(" "),
        "tabs": run_of("\t"),
        "newlines": run_of("\n"),
        "dots": run_of("."),
        "apostrophes": run_of("'"),
        "capital-apostrophe pairs": run_of("A'"),
        "one-letter words": run_of("a "),
        "capitalised words": run_of("Ab "),
        "repeated my": run_of("my "),
        "my then a long word": run_of("x", prefix="my "),
        "a clause then a long run of spaces": run_of(" ", prefix="I like a", suffix="b"),
        "a name then a long run of spaces": run_of(" ", prefix="My name is Ada", suffix="#"),
        "a clause then commas and spaces": run_of(", ", prefix="I like a", suffix="b"),
        "repeated clause openers": run_of("I like x "),
        "repeated thing openers": run_of("I play the x "),
        "a thing opener then a long word": run_of("x", prefix="I'm learning "),
        "a thing opener then stop words": run_of(" in", prefix="I play x"),
        "a city then a long run of spaces": run_of(" ", prefix="I moved to Hangzhou last", suffix="#"),
        "a city then repeated time phrases": run_of(" last month", prefix="I moved to Hangzhou"),
        "repeated pet names": run_of("a cat called Miso "),
        "repeated our": run_of("our "),
        "repeated requests": run_of("tell me "),
        "repeated greetings then a request": run_of("ok, ", suffix="tell me"),
        "repeated 我的": run_of("我的"),
        "我的 then 是 runs": run_of("我的猫是"),
        "我最喜欢的 then CJK characters": run_of("城", prefix="我最喜欢的"),
        "CJK characters": run_of("我"),
        "a fence then spaces": run_of(" ", prefix="```"),
        "a json fence then newlines": run_of("\n", prefix="```json"),
        "backticks": run_of("`"),
    }


def patterns_of(module: ModuleType) -> dict[str, re.Pattern[str]]:
    """Every compiled regex at the top of `module`, also inside tuples of patterns."""
    found: dict[str, re.Pattern[str]] = {}
    for name, value in vars(module).items():
        if isinstance(value, re.Pattern):
            found[f"{module.__name__}.{name}"] = value
        elif isinstance(value, tuple):
            for index, item in enumerate(value):
                row = item if isinstance(item, tuple) else (item,)
                for part in row:
                    if isinstance(part, re.Pattern):
                        found[f"{module.__name__}.{name}[{index}]"] = part
    return found


def all_patterns(*modules: ModuleType) -> dict[str, re.Pattern[str]]:
    """The patterns of `modules`, each once (a module that imports another's is named by the first)."""
    found: dict[str, re.Pattern[str]] = {}
    for module in modules:
        for name, pattern in patterns_of(module).items():
            if all(pattern is not seen for seen in found.values()):
                found[name] = pattern
    return found


PATTERNS = all_patterns(entity_patterns, rule_entity_extractor, extractive_summarizer, llm_memory_models, lexical)
PUBLIC: dict[str, Callable[[str], object]] = {
    "extraction": lambda text: extraction(text, TODAY),
    "sentence_entities": lambda text: sentence_entities(text, TODAY),
    "intent_of": lambda text: intent_of(text, []),
    "salience": lambda text: salience.__wrapped__(text),  # not the cached answer
    "sentences": sentences,
    "select": lambda text: select(sentences(text), SummaryLimit()),
}


ADVERSARIAL, QUARTERS = adversarial(SIZE), adversarial(SIZE // 4)


def best_seconds(work: Callable[[], object]) -> float:
    """The best CPU time of up to 3 runs after a warm-up (stopping at the first within FAST), with
    the garbage collector off: a scan of the whole text makes four times the match objects of a
    quarter's, and a full collection it set off (the test process holds torch and the rest) would
    count as the pattern's growth."""
    work()
    best = float("inf")
    gc.disable()
    try:
        for _ in range(3):
            started = time.process_time()
            work()
            best = min(best, time.process_time() - started)
            if best <= FAST:
                break
    finally:
        gc.enable()
    return best


def slow_ones(jobs: dict[str, Callable[[str], object]], name: str) -> dict[str, str]:
    """The jobs that read the text `name` in more than linear time, with their times."""
    slow = {}
    for job, work in jobs.items():
        whole = best_seconds(partial(work, ADVERSARIAL[name]))
        if whole <= FAST:
            continue
        quarter = best_seconds(partial(work, QUARTERS[name]))
        if whole > CAP or whole > GROWTH * max(quarter, FAST / GROWTH):
            slow[job] = f"{quarter * 1000:.1f} ms for a quarter, {whole * 1000:.1f} ms for the whole"
    return slow


def test_the_modules_patterns_are_all_found() -> None:
    assert len(PATTERNS) >= 30
    assert {"infrastructure.memory.entity_patterns.EMAIL", "infrastructure.memory.rule_entity_extractor._DENIAL",
            "infrastructure.memory.extractive_summarizer._CUES",
            "infrastructure.memory.llm_memory_models._FENCE"} <= set(PATTERNS)


def finds(pattern: re.Pattern[str]) -> Callable[[str], object]:
    return lambda text: list(pattern.finditer(text))


@pytest.mark.parametrize("name", ADVERSARIAL)
def test_every_pattern_scans_32_kib_of_adversarial_text_in_linear_time(name: str) -> None:
    assert len(ADVERSARIAL[name]) <= SIZE
    assert slow_ones({label: finds(pattern) for label, pattern in PATTERNS.items()}, name) == {}


@pytest.mark.parametrize("name", ADVERSARIAL)
def test_the_extractor_and_summariser_read_32_kib_of_adversarial_text_in_linear_time(name: str) -> None:
    assert slow_ones(PUBLIC, name) == {}


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
