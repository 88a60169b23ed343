"""No quadratic work on untrusted text (issue 36): the ReAct fence parser, the scripted model's tool
markers, a fact value's trailing change words and the log redactor's URL password, rewritten to read
a text linearly, find exactly what their old single patterns found. How their CPU time grows is
measured by tests/bench/regex_growth.py, which tests/integration/test_regex_growth_bench.py runs."""

from __future__ import annotations

import random
import re

import pytest

from domain.memory.fact_slots import without_change_after
from domain.tools.react import fenced_json, parse_react_output
from infrastructure.logs.redaction import Redactor
from infrastructure.models.scripted_model import tool_marker
from tests.bench.regex_growth import PATTERNS, PUBLIC, SIZE, adversarial

OLD_FENCE = re.compile(r"```(?:json)?\s*+(\{.*?\})\s*+```", re.DOTALL)
OLD_MARKER = re.compile(r"\[\[tool:([\w.\-]+)\s*(\{.*?\})?\s*\]\]", re.DOTALL)

FENCED = [
    'Let me look.\n```json\n{"name": "search", "args": {"q": "x"}}\n```',
    '```{"name": "a", "args": {}}```',
    '```json{"name": "a"}``` and ```json {"name": "b"}```',
    'nested ```json {"name": "a", "args": {"b": {"c": 1}}} ``` done',
    "``` json {} ```",  # a space before json: not the json tag
    "```jsonx {} ```",
    "```{} } ```",
    "```{ ``` } ```",
    "````{}```",
    "```{```\n```json {\"x\": 1}\n```",
    "no fence at all",
    "```json\n{unclosed",
    "} ``` before ```{ opening",
]
MARKERS = [
    "please [[tool:current_time]]",
    '[[tool:search {"q": "cats"}]]',
    '[[tool:web.search-v2   {"q": "a b"}  ]] then [[tool:other]]',
    "[[tool:a {]] [[tool:b]]",
    "[[tool:a {} } ]]",
    "[[tool:a {x}]]",
    "[[tool: a]] [[tool:b x]] [[tool:c]]",
    "[[tool:a\n{\n}\n]]",
    "[[tool:a {}]",
    "[[[tool:a]]",
    "[[tool:中文 {}]]",
    "no marker",
]


def old_fence(text: str) -> tuple[int, str] | None:
    match = OLD_FENCE.search(text)
    return None if match is None else (match.start(), match.group(1))


def old_marker(text: str) -> tuple[str, str | None] | None:
    match = OLD_MARKER.search(text)
    return None if match is None else (match.group(1), match.group(2))


def shuffled(pieces: tuple[str, ...], seed: int) -> list[str]:
    """Texts made of the pieces that open and close the blocks, in random orders."""
    chance = random.Random(seed)
    return ["".join(chance.choice(pieces) for _ in range(chance.randint(0, 14))) for _ in range(4000)]


@pytest.mark.parametrize("text", FENCED)
def test_the_linear_fence_parser_finds_what_the_old_pattern_found(text: str) -> None:
    assert fenced_json(text) == old_fence(text)


def test_the_linear_fence_parser_agrees_with_the_old_pattern_on_random_texts() -> None:
    for text in shuffled(("```", "json", " ", "\n", "{", "}", '"a"', "x", "`"), seed=36):
        assert fenced_json(text) == old_fence(text), text


def test_a_react_tool_call_keeps_its_thought_and_arguments() -> None:
    step = parse_react_output('I will search.\n```json\n{"name": "search", "args": {"q": "x"}}\n```', "c1")
    assert step.thought == "I will search."
    assert step.call is not None
    assert (step.call.name, step.call.arguments) == ("search", {"q": "x"})


@pytest.mark.parametrize("text", MARKERS)
def test_the_linear_marker_reader_finds_what_the_old_pattern_found(text: str) -> None:
    assert tool_marker(text) == old_marker(text)


def test_the_linear_marker_reader_agrees_with_the_old_pattern_on_random_texts() -> None:
    for text in shuffled(("[[tool:", "a", "b.c", " ", "\n", "{", "}", "]]", "]", "[", "x"), seed=36):
        assert tool_marker(text) == old_marker(text), text


OLD_AFTER = re.compile(
    r"(?:[\s,]+(?:now|these days|nowadays|from now on|at the moment|currently|at present|instead))+$"
)


def test_the_linear_change_words_reader_agrees_with_the_old_pattern_on_random_texts() -> None:
    pieces = ("now", "these days", "from now on", "at present", "instead", " ", ",", "\n", "\t", "x", "no", "w")
    for text in shuffled(pieces, seed=36):
        assert without_change_after(text) == OLD_AFTER.sub("", text), text


def test_the_benchmark_reads_model_output_with_the_model_output_parsers() -> None:
    assert {"domain.tools.react._OPEN", "domain.tools.react._CLOSE", "infrastructure.models.scripted_model._OPENING",
            "infrastructure.models.scripted_model._CLOSING"} <= set(PATTERNS)
    assert {"parse_react_output", "tool_marker", "plain_value"} <= set(PUBLIC)
    texts = adversarial(SIZE)
    assert texts["model output: repeated fence openings"].startswith("```{```{")
    assert texts["model output: repeated tool markers with arguments"].startswith("[[tool:a {[[tool:a {")


OLD_SHAPES = (
    (re.compile(r"\bmk_[A-Za-z0-9_-]{8,}"), "mk_***"),
    (re.compile(r"(\b[a-z][a-z0-9+.-]*://[^:/?#@\s]*:)[^@/?#\s]+@", re.IGNORECASE), r"\1***@"),
    (re.compile(r"(\bBearer\s+)[A-Za-z0-9._~+/=-]+", re.IGNORECASE), r"\1***"),
)


def old_redacted(text: str) -> str:
    for shape, replacement in OLD_SHAPES:
        text = shape.sub(replacement, text)
    return text


@pytest.mark.parametrize(
    "text",
    ["postgresql://app:s3cret@db:5432/x", "see 1.redis+tls://:pw@cache now", "_http://u:p@h", "HTTP://U:P@H",
     "a.b.c://x:y@z and https://u:v@w", "no url here: a.b.c", "x://a:b:c@d/e@f"],
)
def test_the_linear_url_password_shape_masks_what_the_old_one_masked(text: str) -> None:
    assert Redactor()(text) == old_redacted(text)


def test_the_linear_url_password_shape_agrees_with_the_old_one_on_random_texts() -> None:
    pieces = ("a", "B", "1", ".", "+", "-", "_", "://", ":", "@", "/", "#", " ", "é", "K")
    new = Redactor()
    for text in shuffled(pieces, seed=36):
        assert new(text) == old_redacted(text), text
