"""The platform's rules are paid for by every model call: each language's text stays under 250 tokens."""

from __future__ import annotations

import pytest

from domain.agents.prompt import PLATFORM_RULES_BY_LANGUAGE
from infrastructure.runtime.tiktoken_tokenizer import TiktokenTokenizer


@pytest.mark.parametrize("language", sorted(PLATFORM_RULES_BY_LANGUAGE))
def test_the_platform_rules_stay_under_250_tokens(language: str) -> None:
    assert TiktokenTokenizer().count(PLATFORM_RULES_BY_LANGUAGE[language]) < 250
