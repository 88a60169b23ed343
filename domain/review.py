"""Keyword review of a turn's input and output."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class KeywordReview:
    """A hit replaces the text with `preset_response`. Matching ignores case."""

    keywords: tuple[str, ...] = ()
    preset_response: str = "Sorry, I can't help with that."

    def hit(self, text: str) -> str | None:
        """The first keyword found in `text`, or None."""
        lowered = text.casefold()
        for keyword in self.keywords:
            if keyword.strip() and keyword.casefold() in lowered:
                return keyword
        return None
