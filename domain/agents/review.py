"""Keyword review of a turn's input and output."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class KeywordReview:
    """A hit replaces the text with `preset_response`. Matching ignores case.

    Output is reviewed as it streams: `hit` on what came since the last look (with the `longest`
    keyword's length less one before it, as a keyword may span chunks), and `held` keeps back the
    end of the text that could begin a keyword, so no part of a blocked keyword is ever sent."""

    keywords: tuple[str, ...] = ()
    preset_response: str = "Sorry, I can't help with that."

    def hit(self, text: str) -> str | None:
        """The first keyword found in `text`, or None."""
        lowered = text.casefold()
        for keyword in self.keywords:
            if keyword.strip() and keyword.casefold() in lowered:
                return keyword
        return None

    @property
    def longest(self) -> int:
        """The longest keyword's length as matched: casefolded ("ß" is "ss"), never shorter."""
        return max((len(keyword.casefold()) for keyword in self.keywords if keyword.strip()), default=0)

    def held(self, text: str) -> int:
        """How many characters at the end of `text` could be the start of a keyword (at most the
        longest keyword's length less one): they wait for the text that follows."""
        starts = [keyword.casefold() for keyword in self.keywords if keyword.strip()]
        for size in range(min(len(text), self.longest - 1), 0, -1):
            tail = text[-size:].casefold()
            if any(keyword.startswith(tail) and keyword != tail for keyword in starts):
                return size
        return 0
