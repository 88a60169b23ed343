"""The rolling summary and archive summaries (bounded in length), and where upkeep stands."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from domain.errors import DomainError

if TYPE_CHECKING:
    from collections.abc import Sequence
    from datetime import datetime

    from domain.conversations.conversation import Message
    from domain.ids import MessageId

# --- the rolling summary and archive summaries: bounded in length --------------------------------

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])\s*")
ELLIPSIS = "…"


_SPACE = re.compile(r"\s")


def is_cjk(text: str) -> bool:
    """Chinese, Japanese or Korean text: at least 30% of its non-space characters are CJK."""
    visible = len(text) - len(_SPACE.findall(text))  # regexes count at C speed: this runs per candidate
    return visible > 0 and len(_CJK.findall(text)) * 10 >= 3 * visible


@dataclass(frozen=True, slots=True)
class SummaryLimit:
    """How long a summary may be: `max_cjk_chars` characters for CJK text, else `max_words` words."""

    max_words: int = 120
    max_cjk_chars: int = 200

    def __post_init__(self) -> None:
        if self.max_words < 1 or self.max_cjk_chars < 1:
            raise DomainError("summary limits must be at least 1")

    def limit_for(self, text: str) -> int:
        return self.max_cjk_chars if is_cjk(text) else self.max_words

    def fits(self, text: str) -> bool:
        cjk = is_cjk(text)
        return _measure(text, cjk) <= (self.max_cjk_chars if cjk else self.max_words)

    def describe(self) -> str:
        return f"at most {self.max_words} words ({self.max_cjk_chars} characters for Chinese, Japanese or Korean)"

    def trim(self, text: str) -> str:
        """The text within the bound: whole sentences when they keep at least half of it, else cut with "…"."""
        text = " ".join(text.split())
        if self.fits(text):
            return text
        cjk = is_cjk(text)
        limit = self.limit_for(text)
        kept = ""
        for sentence in (s for s in _SENTENCE_END.split(text) if s):
            candidate = kept + sentence if cjk else f"{kept} {sentence}".strip()
            if _measure(candidate, cjk) > limit:
                break
            kept = candidate
        if _measure(kept, cjk) * 2 >= limit:
            return kept
        if not cjk:
            return (" ".join(text.split()[: limit - 1]) + " " + ELLIPSIS).strip()
        out, visible = [], 0
        for char in text:
            if not char.isspace():
                if visible == limit - 1:
                    break
                visible += 1
            out.append(char)
        return "".join(out).rstrip() + ELLIPSIS


def _measure(text: str, cjk: bool) -> int:
    """Characters (without spaces) for CJK text, words otherwise."""
    return len("".join(text.split())) if cjk else len(text.split())


@dataclass(frozen=True, slots=True)
class UpkeepState:
    """Where a conversation's upkeep stands.

    `summarized_through`: the newest turn already folded into the rolling summary (None: unknown);
    `forgotten_at`: memory was wiped then, so upkeep ignores turns from before;
    `rollback_through` and `rollback_summary`: the cursor and the summary from before the last
    update, so that a regenerated answer replaces the superseded one in the summary instead of
    being counted beside it (None: not known).
    """

    summarized_through: MessageId | None = None
    forgotten_at: datetime | None = None
    rollback_through: MessageId | None = None
    rollback_summary: str | None = None

    def rolled_back(self) -> UpkeepState:
        """The state from before the last update."""
        return replace(self, summarized_through=self.rollback_through, rollback_through=None, rollback_summary=None)

    def advanced(self, through: MessageId, summary_before: str) -> UpkeepState:
        """Summarised up to `through`, with what to roll back to."""
        return replace(
            self, summarized_through=through, rollback_through=self.summarized_through, rollback_summary=summary_before
        )


SUMMARY_CATCH_UP = 5  # turns a summary update reads at most, to catch up after failures


def pending_for_summary(turns: Sequence[Message], state: UpkeepState, has_summary: bool) -> list[Message]:
    """The completed turns (oldest first, the last few) that the rolling summary does not hold yet.

    After the last summarised turn when it is among them; all of them when it is not (updates
    failed for a while) or when the conversation has no summary yet; only the newest turn when
    nothing says what the summary holds (memory lost), so nothing is summarised twice.
    """
    done = [t for t in turns if t.is_completed_turn]
    if state.forgotten_at is not None:
        done = [t for t in done if t.created_at > state.forgotten_at]
    ids = [t.id for t in done]
    if state.summarized_through is not None:
        if state.summarized_through in ids:
            return done[ids.index(state.summarized_through) + 1 :]
        return done
    if not has_summary:
        return done
    return done[-1:]
