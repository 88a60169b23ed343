"""`NAME_PATTERN` (the API schema's document names) accepts exactly what `document_name` and
`document_type` accept, so that the spec and the route agree."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from application.errors import InvalidInput, UnsupportedMediaType
from application.knowledge.documents import NAME_PATTERN, WHITE_SPACE, document_name, document_type

PATTERN = re.compile(NAME_PATTERN)


def accepted(name: str) -> bool:
    try:
        document_type(document_name(name), None)
    except (InvalidInput, UnsupportedMediaType):
        return False
    return True


def test_the_white_space_class_is_what_str_isspace_says() -> None:
    spaces = {chr(c) for c in range(0x110000) if chr(c).isspace()}
    assert {chr(c) for c in range(0x110000) if re.fullmatch(f"[{WHITE_SPACE}]", chr(c))} == spaces


NAMES = ["a.txt", "x.sh", "docs/handbook.md", "a/", " ", ".bashrc", "...", "a.", "README", "a b.MD ",
         "a\nb.txt", "c:\\x\\y.md", ".md", "a.b.c", "a.md.sh", "..md", " x .txt", "\x85a\x85", "\ufeff", "a\rb.md"]


@pytest.mark.parametrize("name", NAMES)
def test_the_pattern_accepts_the_names_the_rules_accept(name: str) -> None:
    assert bool(PATTERN.fullmatch(name)) == accepted(name)


@given(st.text(alphabet=st.sampled_from("ab. /\\\t\n\x85\u3000MdDtTxX"), max_size=12))
def test_the_pattern_and_the_rules_agree_on_any_name(name: str) -> None:
    assert bool(PATTERN.fullmatch(name)) == accepted(name)


@pytest.mark.parametrize("name", ["x.sh", "x.exe", "a.bin"])
def test_a_name_with_another_extension_is_refused_whatever_its_declared_type(name: str) -> None:
    with pytest.raises(UnsupportedMediaType):
        document_type(name, "text/plain")


@pytest.mark.parametrize("name", ["a\r.txt", "a\n.txt", "a\x7f.md", "a\tb.txt"])
def test_a_name_with_a_control_character_is_refused(name: str) -> None:
    with pytest.raises(InvalidInput):
        document_name(name)
