"""The offline entity extractor: documented patterns, so entity memory works without an LLM.

It reads the user's message only and returns the same `{intent, entities}` shape as the LLM
extractor, each entity with its `scope` and `explicit` flag. Patterns (English, plus a few
Chinese ones) → type (confidence), [scope]:

- "my name is Ada", 我叫…, 我的名字是… → `name` (0.95); "call me Ada" → `name` (0.85);
  "I'm Ada" (a capitalised word) → `name` (0.6: kept, below the prompt threshold) [user]
- an e-mail address → `email` (0.98); a phone number (+33 6 12 34 56 78, 555-123-4567) → `phone` (0.9) [user]
- "I live in / moved to / am moving to Lisbon", 我住在… → `city` (0.9); "I'm from Porto" → `hometown` (0.85) [user]
- "my <thing> is <value>" → `<thing>` (0.9), scoped by its type: "my favourite colour is teal" →
  `favourite_colour` [user], "my dog's name is Rex" → `dog_name` [user], "my flight is at 9" → `flight`
  [conversation]
- today, tonight, tomorrow, the day after tomorrow, in 3 days, next Friday, on May 3, 2026-05-17,
  今天/明天/后天/大后天 → `date`, resolved against the message's day (a weekday: its next
  occurrence), e.g. "the day after tomorrow (2026-01-03)": 0.85 with a scheduling word (book,
  meeting, make it, for, on…), 0.6 without, 0.5 in a question [conversation]
- "I like / love / enjoy X", 我喜欢… → `likes` (0.8); "I prefer X" → `preference` (0.85);
  "I hate / dislike / don't like X" → `dislikes` (0.8) [user]
- "I'm vegan / vegetarian / pescatarian / gluten-free" → `diet` (0.9); "I'm allergic to X" → `allergy`
  (0.9) [user]
- "I'm 34 (years old)" → `age` (0.9); "I work as a nurse" → `job`, "I work at / for Acme" → `employer`
  (0.85) [user]
- "remind me to X", "I need / have / still have to X", "don't let me forget to X", 提醒我… → `task` (0.8)
  [conversation]

The scope is the type's, from the table of `domain.entity_extraction.default_scope`: user facts
(name, contact, city, hometown, job, employer, diet, allergy, likes, dislikes, preference, age,
birthday, family and pets, `favourite_*`, `<relation>_*` such as `dog_name`) are `user`; the task's
state (date, task, intent and any type the table does not know) is `conversation`. `explicit` is
true for a direct statement (every pattern of confidence 0.8 and up: the user's own words) and
false for the guesses below it: a bare "I'm Ada", a date without a scheduling word, a date in a
question.

A negated statement ("my car is not red") yields nothing. Intent: `ask` (a question),
`correct` ("actually", "change it", "make it", "instead"), `task`, `inform` (entities found),
`small_talk`, else `chat`.
"""

from __future__ import annotations

import asyncio
import re
from datetime import date, timedelta
from typing import TYPE_CHECKING, Any

from application.ports.memory_models import EntityExtractor
from domain.entity_extraction import default_scope

if TYPE_CHECKING:
    from collections.abc import Iterator

    from domain.memory import Exchange

_WORD = r"[A-Z][\w'-]*"
_NAME = rf"({_WORD}(?:\s+{_WORD}){{0,2}})"
_END = r"(?=\s*(?:[.!?;,]|\band\b|\bbut\b|\bso\b|$))"
# The shortest text (at least one character) up to the end of the clause, as `(.+?)\s*(?:…)` had it,
# in linear time: it may end only on a non-space (or after its first character), the spaces after it
# are taken at once (`\s*+`), and a line's end ends it too (no sentence holds one: they are split
# at newlines), so every start that reaches the clause matches, and its text is never scanned again.
_CLAUSE = r"(.(?:.*?(?<!\s))??)\s*+(?:[.!?;]|,\s*+(?:and|but|so)\b|$|(?=\n))"
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september",
           "october", "november", "december")
_PRONOUNS = {"it", "that", "this", "them", "you", "him", "her", "those", "these", "one", "so", "too"}
_NOT_SUBJECTS = {"point", "question", "problem", "bad", "guess", "pleasure", "turn", "fault", "answer",
                 "opinion", "idea", "issue", "concern", "god", "goodness", "gosh", "mistake", "take"}

_SPECIAL_SUBJECTS = {"name", "email", "e-mail", "email address", "e-mail address", "phone", "phone number",
                     "number", "mobile", "mobile number"}

Found = tuple[str, str, float]  # type, value, confidence
# The weak patterns (a bare "I'm Ada", a date without a scheduling word or in a question) sit at
# 0.6 and below: guesses. Every pattern from here up matches the user stating the value outright.
EXPLICIT_FROM = 0.8

# What of a sentence is read: no normal sentence is longer, and every pattern stays within
# milliseconds on the cut (each is linear too, so a longer bound would only cost time).
MAX_SENTENCE = 1000


def bounded(sentence: str) -> str:
    """The sentence cut to MAX_SENTENCE characters, after its last whole word when it has one."""
    if len(sentence) <= MAX_SENTENCE:
        return sentence
    cut = sentence[:MAX_SENTENCE]
    space = cut.rfind(" ")
    return cut[:space] if space > 0 else cut


def word_alternatives(words: str) -> str:
    r"""`(?:w1|w2|…)` for `|`-separated words (each starting with a plain letter), written so that a
    position is tried against the words of its first letter only: `(?=[im])(?:i(?:'m| am)|m(?:y|ine))`.
    The same matches as the plain alternation, several times faster on long text."""
    groups: dict[str, list[str]] = {}
    for word in words.split("|"):
        groups.setdefault(word[0], []).append(word[1:])
    firsts = "".join(groups)
    return f"(?=[{firsts}])(?:" + "|".join(f"{first}(?:{'|'.join(rest)})" for first, rest in groups.items()) + ")"


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


_PATTERNS: tuple[tuple[re.Pattern[str], str, float], ...] = (
    (re.compile(rf"\b[Mm]y name is {_NAME}{_END}"), "name", 0.95),
    (re.compile(rf"\b(?:[Cc]all me|I go by) {_NAME}{_END}"), "name", 0.85),
    (re.compile(rf"\bI(?:'m| am) ({_WORD}){_END}"), "name", 0.6),
    (_rx(rf"\bI (?:live|am living|'m living|moved|have moved|am moving|'m moving|relocated) (?:in|to) {_NAME}{_END}"),
     "city", 0.9),
    (re.compile(rf"\bI(?:'m| am) (?:from|based in) {_NAME}{_END}"), "hometown", 0.85),
    (_rx(r"\bI(?:'m| am) (vegan|vegetarian|pescatarian|gluten[- ]free|lactose[- ]intolerant)\b"), "diet", 0.9),
    (_rx(rf"\bI(?:'m| am) allergic to {_CLAUSE}"), "allergy", 0.9),
    (_rx(r"\bI(?:'m| am) (\d{1,3})(?: years old| yo)?(?=\s*(?:[.!?,;]|$))"), "age", 0.9),
    (_rx(r"\bI work as (?:an? )?" + _CLAUSE), "job", 0.85),
    (_rx(r"\bI work (?:at|for) " + _CLAUSE), "employer", 0.85),
    (_rx(r"\bI (?:really |also |much )?prefer " + _CLAUSE), "preference", 0.85),
    (_rx(r"\bI (?:really |also )?(?:like|love|enjoy|adore) " + _CLAUSE), "likes", 0.8),
    (_rx(r"\bI (?:really )?(?:hate|dislike|can't stand|cannot stand|don't like|do not like) " + _CLAUSE),
     "dislikes", 0.8),
    (_rx(r"\b(?:remind me to|don't let me forget to|do not let me forget to|I (?:still )?(?:need|have|got) to|"
         r"I must|I have yet to|to-?do:) " + _CLAUSE), "task", 0.8),
    (re.compile(r"我叫([^\s，。！？,.!?]{1,10})"), "name", 0.95),
    (re.compile(r"我的名字是([^\s，。！？,.!?]{1,10})"), "name", 0.95),
    (re.compile(r"我住在([^\s，。！？,.!?]{1,20})"), "city", 0.9),
    (re.compile(r"我喜欢([^\s，。！？,.!?]{1,20})"), "likes", 0.8),
    (re.compile(r"提醒我([^\s，。！？,.!?]{1,40})"), "task", 0.8),
)
_MY_THING = _rx(r"\bmy ((?:[\w'-]+\s+){0,3}?[\w'-]+) (?:is|are|was|will be) (?:now |actually |still )?" + _CLAUSE)
# An address starts where a run of its characters does: from inside a run, the run's start matches
# first, and trying every position of a long run to find no "@" made it quadratic.
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_PHONE = re.compile(r"(?<![\w+])(\+\d[\d ().-]{7,}\d|\(?\d{3}\)?[ .-]\d{3}[ .-]\d{4})(?!\w)")
_QUESTION = _rx(r"^(?:what|when|where|who|whom|which|why|how|do|does|did|is|are|can|could|would|will|should)\b")
_CORRECTION = _rx(r"\b(?:actually|change it|make it|instead|update|correction|not anymore|no longer)\b")
_SMALL_TALK = _rx(r"^(?:hi|hello|hey|thanks|thank you|ok|okay|cool|great|nice|lol|haha|bye|good (?:morning|night))\b")
_SCHEDULING = _rx(
    r"\b" + word_alternatives(
        "book|booked|booking|reserve|reservation|schedule|scheduled|appointment|meeting|make it|move it|"
        "change it|push it|set it|for|on|until|by|due|deadline|flight|fly|trip|leave|leaving|arrive|visit|dinner|"
        "lunch|party|call|plan|planned|planning|table|ticket|deliver|delivery|meet"
    ) + r"\b|订|预约|改到|安排"
)
_SENTENCES = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])|\n+")


def _dates(text: str, today: date) -> Iterator[tuple[str, date]]:
    """The first date expression of the text (as written) and the day it means."""
    lower = text.lower()
    for phrase, when in _date_matches(lower, today):
        start = lower.find(phrase)
        yield (text[start : start + len(phrase)] if len(lower) == len(text) and start >= 0 else phrase), when


def _date_matches(lower: str, today: date) -> Iterator[tuple[str, date]]:
    for phrase, days in (("the day after tomorrow", 2), ("day after tomorrow", 2), ("大后天", 3), ("后天", 2)):
        if phrase in lower:
            yield phrase, today + timedelta(days=days)
            return
    for phrase, days in (("tomorrow", 1), ("明天", 1), ("tonight", 0), ("today", 0), ("今天", 0)):
        if re.search(rf"(?<![\w]){phrase}(?![\w])", lower) if phrase.isascii() else phrase in lower:
            yield phrase, today + timedelta(days=days)
            return
    if match := re.search(r"\bin (\d{1,3}) days?\b", lower):
        yield match.group(0), today + timedelta(days=int(match.group(1)))
        return
    if match := re.search(rf"\b(?:(next|this|on) )?({'|'.join(_WEEKDAYS)})\b", lower):
        ahead = (_WEEKDAYS.index(match.group(2)) - today.weekday()) % 7 or 7
        yield match.group(0), today + timedelta(days=ahead)
        return
    if match := re.search(rf"\b({'|'.join(_MONTHS)}) (\d{{1,2}})(?:st|nd|rd|th)?\b", lower):
        month, day = _MONTHS.index(match.group(1)) + 1, int(match.group(2))
        try:
            when = date(today.year, month, day)
        except ValueError:
            return
        yield match.group(0), when if when >= today else date(today.year + 1, month, day)
        return
    if match := re.search(r"\b(\d{4})-(\d{2})-(\d{2})\b", lower):
        try:
            yield match.group(0), date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
        except ValueError:
            return


def _clean(value: str) -> str:
    return " ".join(value.strip(" \t\"'“”‘’").split()).rstrip(".,;:!?")


def _thing_type(subject: str) -> str:
    return re.sub(r"'s\b", "", subject.casefold())


def _negated(text: str) -> bool:
    return bool(re.match(r"^(?:not|no longer|never|n't)\b", text.strip(), re.IGNORECASE))


def sentence_entities(sentence: str, today: date) -> list[Found]:
    """The entities one sentence states (within its first MAX_SENTENCE characters)."""
    sentence = bounded(sentence)
    found: list[Found] = []
    question = sentence.rstrip().endswith(("?", "？")) or bool(_QUESTION.match(sentence.strip()))
    if question:  # a question states nothing, except perhaps the date it is about
        for phrase, when in _dates(sentence, today):
            found.append(("date", f"{phrase} ({when.isoformat()})", 0.5))
        return found
    for email in _EMAIL.findall(sentence):
        found.append(("email", email, 0.98))
    if not found:
        for phone in _PHONE.findall(sentence):
            found.append(("phone", " ".join(phone.split()), 0.9))
    covered = ""
    for match in _MY_THING.finditer(sentence):
        subject, value = match.group(1), _clean(match.group(2))
        if subject.split()[-1].casefold() in _NOT_SUBJECTS or _negated(value) or value.casefold() in _PRONOUNS:
            continue
        if subject.casefold() in _SPECIAL_SUBJECTS:
            continue  # their own patterns have them
        if value and len(value.split()) <= 12:
            found.append((_thing_type(subject), value, 0.9))
            covered += " " + value
    for pattern, kind, confidence in _PATTERNS:
        for match in pattern.finditer(sentence):
            value = _clean(match.group(1))
            if not value or value.casefold() in _PRONOUNS or _negated(value) or len(value.split()) > 12:
                continue
            if kind == "name" and confidence < 0.7 and value.casefold() in {"sure", "sorry", "fine", "here", "back"}:
                continue
            found.append((kind, value, confidence))
    for phrase, when in _dates(sentence, today):
        if phrase.casefold() not in covered.casefold():
            sure = 0.85 if _SCHEDULING.search(sentence) else 0.6  # "nice weather today" sets no date
            found.append(("date", f"{phrase} ({when.isoformat()})", sure))
    return found


def intent_of(text: str, found: list[Found]) -> str:
    stripped = text.strip()
    if stripped.endswith(("?", "？")) or _QUESTION.match(stripped):
        return "ask"
    if _CORRECTION.search(stripped):
        return "correct"
    if any(kind == "task" for kind, _, _ in found):
        return "task"
    if found:
        return "inform"
    if _SMALL_TALK.match(stripped):
        return "small_talk"
    return "chat"


def extraction(query: str, today: date) -> dict[str, Any]:
    """What the user's message states: `{intent, entities: [{type, value, confidence, scope, explicit}]}`."""
    found: list[Found] = []
    for sentence in (s.strip() for s in _SENTENCES.split(query)):
        if sentence:
            found.extend(sentence_entities(sentence, today))
    entities: list[dict[str, Any]] = [
        {"type": k, "value": v, "confidence": c, "scope": default_scope(k).value, "explicit": c >= EXPLICIT_FROM}
        for k, v, c in found
    ]
    return {"intent": intent_of(query, found), "entities": entities}


class RuleBasedEntityExtractor(EntityExtractor):
    async def extract(self, exchange: Exchange) -> object:
        # Pure CPU work, up to tens of milliseconds for a long query: in a worker thread, so that
        # the event loop (other turns' streams, /healthz) never waits for it.
        return await asyncio.to_thread(extraction, exchange.query, exchange.at.date())
