"""The offline summariser: extractive, so memory works without an LLM.

It keeps the user's own sentences — scored for what a summary must keep (facts about the
user, decisions, preferences, unfinished tasks: first-person statements, "my …", "remind
me …", names, numbers, dates) — drops small talk, and trims to the bound, dropping the
least salient (then the oldest) sentences first. A newer sentence that states a single-valued
fact again ("my X is …", "our X is …", a name, a city, an employer… as the rule-based extractor
reads them) replaces the older one. The assistant's words are not kept: offline, they are scripted.

Dropped as holding no fact of the user's: small talk, questions (unless they ask for a task: "can
you remind me to…?"), and requests to the assistant — a sentence opening (after "hi", "ok",
"please"…) with "tell / give / show me", "can / could / would / will you", "please", summarise,
explain, list, write, translate, describe, suggest, recommend, compare… ("Tell me a fun fact about
octopuses.") — unless the request holds a cue (a first-person, preference, task, decision or day
word, an address: "Write a poem for my mum's birthday."); a name or a number alone is the request's
topic ("Give me 3 facts about the Roman empire."), not a fact about the user.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from datetime import date
from functools import lru_cache
from typing import TYPE_CHECKING

from application.ports.memory_models import Summarizer
from domain.memory.summary import SummaryLimit, is_cjk
from infrastructure.memory.entity_patterns import word_alternatives
from infrastructure.memory.rule_entity_extractor import bounded, sentence_entities

if TYPE_CHECKING:
    from collections.abc import Sequence

    from domain.memory.window import Exchange

_SPLIT = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])|\n+")
_SMALL_TALK = re.compile(
    r"^(?:hi|hello|hey|yo|thanks|thank you|thx|ok|okay|k|cool|great|nice|awesome|lol|haha|hmm|sure|yes|no|"
    r"yeah|yep|nope|good (?:morning|afternoon|evening|night)|bye|goodbye|see you|how are you|how's it going|"
    r"what's up|you're welcome|no problem|sounds good|got it|tell me a joke|你好|谢谢|好的|再见)\b",
    re.IGNORECASE,
)
_CUES = re.compile(
    r"\b" + word_alternatives(
        "my|mine|i'm|i am|i've|i have|i live|i work|i prefer|i like|i love|i hate|i need|i must|i should|"
        "i want|i will|i'll|remind me|don't forget|do not forget|deadline|decided|agreed|let's|plan|booked|book|"
        "appointment|meeting|birthday|allergic|vegan|vegetarian|favou?rite|call me|todo|to-do|still|later|"
        "tomorrow|today|tonight|next week|monday|tuesday|wednesday|thursday|friday|saturday|sunday"
    ) + r"\b"
    # An address from the start of its run of characters: trying each position of a long run for
    # an "@" that is not there was quadratic.
    r"|(?<![\w.+-])[\w.+-]+@[\w-]+\.\w+|\d|我|要|需要|喜欢|名字|住|明天|后天",
    re.IGNORECASE,
)
# A request to the assistant, from the sentence's start (see the module's docstring).
_ASKS_ASSISTANT = re.compile(
    r"^(?:(?:hi|hey|hello|ok|okay|so|now|and|also|alright|please|pls)\b[\s,!]*){0,3}" + word_alternatives(
        "tell me|give me|show me|send me|teach me|help me|walk me through|quiz me|let me know|can you|could you|"
        "would you|will you|can u|please|pls|summarise|summarize|sum up|explain|list|write|rewrite|translate|"
        "describe|suggest|recommend|compare|define|draft|generate|create|brainstorm|outline|rephrase|paraphrase|"
        "calculate|convert|find|search|look up"
    ) + r"\b",
    re.IGNORECASE,
)
_REQUEST = re.compile(r"\b(?:remind me|don't let me forget|i (?:still )?(?:need|have) to)\b", re.IGNORECASE)
_PROPER = re.compile(r"(?<!^)(?<![.!?]\s)\b[A-Z][a-z]+")
_MANY_VALUED = {"task", "date", "likes", "dislikes", "preference", "allergy", "plays", "learning", "supports",
                "saving_for"}
_ANY_DAY = date(2000, 1, 1)  # dates are not compared, only the types stated
_MY_SUBJECT = re.compile(r"^(?:\w+,?\s+)?((?:my|our)\s+(?:[\w'-]+\s+){0,3}?[\w'-]+)\s+(?:is|are|was)\b",
                         re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class _Sentence:
    text: str
    score: float
    order: int


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SPLIT.split(text) if s and s.strip()]


# A summary's sentences are scored again at every update: the cache keeps that from costing the
# regexes each time (scores depend on the sentence alone).
@lru_cache(maxsize=4096)
def salience(sentence: str) -> float:
    """0 for small talk, more for each cue that a summary should keep it."""
    words = sentence.split()
    if _SMALL_TALK.match(sentence.strip()) and len(words) <= 6:
        return 0.0
    read = bounded(sentence)
    found = _CUES.findall(read)
    if _ASKS_ASSISTANT.match(read.lstrip()) and all(cue.isdigit() for cue in found):
        return 0.0  # a request to the assistant, with no cue of a fact about the user
    cues = len(found) + len(_PROPER.findall(read))
    if sentence.rstrip().endswith(("?", "？")) and not _REQUEST.search(read):
        return 0.0  # a question holds no fact, unless it asks for a task ("can you remind me to…?")
    if not cues and len(words) < 4 and not is_cjk(sentence):
        return 0.0
    return 1.0 + cues


@lru_cache(maxsize=4096)
def _subjects(sentence: str) -> frozenset[str]:
    """What a sentence states that can only have one value: "my/our X is …" subjects and the extractor's
    single-valued types (name, city, employer…). A newer sentence stating one replaces the older."""
    mine = _MY_SUBJECT.match(bounded(sentence).strip())
    found = {" ".join(mine.group(1).casefold().split())} if mine else set()
    for kind, _, confidence in sentence_entities(sentence, _ANY_DAY):
        if kind not in _MANY_VALUED and confidence >= 0.7:
            found.add(kind)
    return frozenset(found)


def _key(sentence: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", sentence.casefold()).split())


def select(candidates: Sequence[str], limit: SummaryLimit) -> str:
    """The candidates (oldest first) that fit the bound, in their order."""
    seen: dict[str, _Sentence] = {}
    by_subject: dict[str, str] = {}
    for order, text in enumerate(candidates):
        score = salience(text)
        key = _key(text)
        if score <= 0 or not key:
            continue
        seen.pop(key, None)
        for subject in _subjects(text):
            if subject in by_subject:
                seen.pop(by_subject[subject], None)  # said again: the newer sentence replaces the older
            by_subject[subject] = key
        seen[key] = _Sentence(text, score, order)
    # Keep the most salient first, the newer on a tie, while the bound allows.
    ranked = sorted(seen.values(), key=lambda s: (-s.score, -s.order))
    kept: list[_Sentence] = []
    for sentence in ranked:
        trial = " ".join(s.text for s in sorted([*kept, sentence], key=lambda s: s.order))
        if limit.fits(trial):
            kept.append(sentence)
    if not kept and ranked:  # even the best sentence is too long: cut it
        return limit.trim(ranked[0].text)
    return "".join(_join(sorted(kept, key=lambda s: s.order)))


def _join(kept: Sequence[_Sentence]) -> list[str]:
    out: list[str] = []
    for sentence in kept:
        text = sentence.text if sentence.text[-1] in ".!?。！？" else sentence.text + "."
        out.append(text if not out or is_cjk(text) else " " + text)
    return out


def _user_sentences(exchanges: Sequence[Exchange]) -> list[str]:
    return [s for exchange in exchanges for s in sentences(exchange.query)]


def _update(summary: str, exchanges: Sequence[Exchange], limit: SummaryLimit) -> str:
    return select([*sentences(summary), *_user_sentences(exchanges)], limit)


def _condense(exchanges: Sequence[Exchange], limit: SummaryLimit) -> str:
    return select(_user_sentences(exchanges), limit)


class ExtractiveSummarizer(Summarizer):
    # Pure CPU work, up to tens of milliseconds for long queries: in a worker thread, so that the
    # event loop (other turns' streams, /healthz) never waits for it.
    async def update(self, summary: str, exchanges: Sequence[Exchange], limit: SummaryLimit) -> str:
        return await asyncio.to_thread(_update, summary, list(exchanges), limit)

    async def condense(self, exchanges: Sequence[Exchange], limit: SummaryLimit) -> str:
        return await asyncio.to_thread(_condense, list(exchanges), limit)
