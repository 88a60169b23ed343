"""The offline entity extractor: documented patterns, so entity memory works without an LLM.

It reads the user's message only and returns the same `{intent, entities}` shape as the LLM
extractor, each entity with its `scope` and `explicit` flag. Patterns (English, plus a few
Chinese ones) → type (confidence), [scope]:

- "my name is Ada (now)", "I changed my name to Ada", 我叫…, 我的名字是… → `name` (0.95); "call me Ada
  (from now on)" → `name` (0.85); "I'm Ada" (a capitalised word) → `name` (0.6: below the prompt's
  threshold) [user]
- an e-mail address → `email` (0.98); a phone number (+33 6 12 34 56 78, 555-123-4567, 13800138000) →
  `phone` (0.9) [user]
- "I / we live in, (have just) moved to, relocated to Lisbon", "I'm based in Lisbon", "home for me is
  Lisbon", 我(现在/已经)住在/搬到… → `city` (0.9, home 0.85), a time phrase after the city left out ("I
  moved to Hangzhou last month / now / in 2020" → Hangzhou); "I'm from Porto" → `hometown` (0.85) [user]
- "my <thing> is (now) <value>" → `<thing>` (0.9), "our <thing> is <value>" → `<thing>` (0.85), 我(现在)的X是Y,
  X已经变成Y → `X` (0.85), an article before the value left out: "my favourite colour is teal" →
  `favourite_colour`, "my dog's name is Rex" → `dog_name`, "my car is a Fiat" → `car` Fiat [user]; "my
  flight is at 9" → `flight`, and any task state [conversation]
- 我(现在)最喜欢的X是Y → `favourite_X` (0.85) [user]
- a relation held by one person at a time: "Kenji is my (new) manager", "I have a new boss called Olga"
  → `manager` / `boss` (0.85), also doctor, GP, dentist, partner, landlord, therapist [user]
- today, tonight, tomorrow, the day after tomorrow, in 3 days, next Friday, on May 3, 2026-05-17,
  今天/明天/后天/大后天 → `date`, resolved against the message's day (a weekday: its next
  occurrence), e.g. "the day after tomorrow (2026-01-03)": 0.85 with a scheduling word (book,
  meeting, make it, for, on…), 0.6 without, 0.5 in a question [conversation]
- "I like / love / enjoy X", 我喜欢… → `likes` (0.8); "I prefer X" → `preference` (0.85);
  "I hate / dislike / don't like X" → `dislikes` (0.8) [user]
- "I'm / I eat vegan, vegetarian, pescatarian, gluten-free…", 我是素食者 → `diet` (0.9); "I'm no longer
  vegetarian", "I'm not vegan anymore", 我不再是素食者了 → `diet` "no longer vegetarian" / 不再是素食者 (0.9);
  "I'm allergic to X" → `allergy` (0.9); "I've switched to X" → `preference` (0.8) [user]
- "I'm 34 (years old) (now)", "I (just) turned 35", 我(今年/刚满/已经)35岁 → `age` (0.9); "I work as / I'm
  working as a nurse", "I'm (now) a nurse" (a known job), 我是一名…, 换工作了，现在是… → `job`; "I work at /
  for Acme", "I've joined Acme", 我在…工作, 跳槽到… → `employer` (0.85); "I drive a Fiat Panda", "I sold my
  car and bought a Fiat", 换车了，现在开… → `car` (0.85) [user]
- "I play (the) cello / tennis" → `plays` (0.85); "I'm learning / studying Japanese" → `learning` (0.85);
  "I support (the) Benfica" (a capitalised name) → `supports` (0.85), "I'm a (big) fan of X" → `supports`
  (0.8); "I'm saving (up) for X" → `saving_for` (0.8): the instrument, sport, subject or fan's thing is
  one to three words, up to a preposition or time word ("the cello in an orchestra" → cello) [user]
- "a / my / our cat, dog, kitten, puppy, rabbit, hamster, parrot called / named Miso" (a capitalised
  name) → `<pet>_name` (0.85) [user]
- "remind me to X", "I need / have / still have to X", "don't let me forget to X", 提醒我… → `task` (0.8)
  [conversation]

The scope is the type's, from the table of `domain.memory.entity_extraction.default_scope`: user facts
(name, contact, city, hometown, job, employer, diet, allergy, likes, dislikes, preference, age,
birthday, family and pets, plays, learning, supports, saving_for, `favourite_*`, `<relation>_*` such as
`dog_name`) are `user`; the task's state (date, task, intent) is `conversation`. A type the table does
not know is the user's own thing, said as "my/our X is" or 我的X是 (a car, a blood type, a gym class), so
it is `user`, unless it is task state by the table's TASK_NOUNS (booking, flight, trip, ticket, time…).
`explicit` is true for a direct statement (every pattern of confidence 0.8 and up: the user's own
words) and false for the guesses below it: a bare "I'm Ada", a date without a scheduling word, a date
in a question.

Memory keys each type as its fact's slot (`domain.memory.fact_slots`: `boss` is `manager`, 车 is `car`), and
drops a change's words around a user fact's value ("green now" is green, "called Carla" is Carla).

A negated statement yields nothing (but a diet no longer kept, above): a negated value ("my car is
not red", 我的车不是红色的) or a negation earlier in the clause ("I don't think my car is red", "I never
had a cat called Miso").

Intent: `ask` (a question), `correct` ("actually", "change it", "make it", "instead"), `task`,
`inform` (entities found), `small_talk`, else `chat`.
"""

from __future__ import annotations

import asyncio
import re
from datetime import date, timedelta
from typing import TYPE_CHECKING, Any

from application.ports.memory_models import EntityExtractor
from domain.memory.entity_extraction import default_scope
from infrastructure.memory.entity_patterns import (
    EMAIL,
    MONTHS,
    MY_THING,
    PATTERNS,
    PHONE,
    RETRACTIONS,
    WEEKDAYS,
    word_alternatives,
)

if TYPE_CHECKING:
    from collections.abc import Iterator

    from domain.memory.window import Exchange

_PRONOUNS = {"it", "that", "this", "them", "you", "him", "her", "those", "these", "one", "so", "too"}
_NOT_SUBJECTS = {"point", "question", "problem", "bad", "guess", "pleasure", "turn", "fault", "answer",
                 "opinion", "idea", "issue", "concern", "god", "goodness", "gosh", "mistake", "take"}

_HAN = re.compile(r"[\u3400-\u9fff]")
_ARTICLE = re.compile(r"^an? (?=\S)")  # "my car is a Fiat" → Fiat (lower case: "A Fine Balance" stays)
_CHANGED = re.compile(r"^(?:new|current|old) ")  # "my new number is…" is the number's statement
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


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


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
# A negation in the clause before a statement: the text after the last clause break (a punctuation
# mark, "but", "and", "so") holds "not", "never", "…n't", or a "no" after a word ("I have no dog
# called Rex"; a leading "No I live in Porto" is a correction, not a negation).
_CLAUSE_BREAK = _rx(r"[,.;:!?]|\b(?:but|and|so)\b")
_DENIAL = _rx(r"\b(?:not|never)\b|n't\b|(?<=\w )no\b")


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
    if match := re.search(rf"\b(?:(next|this|on) )?({'|'.join(WEEKDAYS)})\b", lower):
        ahead = (WEEKDAYS.index(match.group(2)) - today.weekday()) % 7 or 7
        yield match.group(0), today + timedelta(days=ahead)
        return
    if match := re.search(rf"\b({'|'.join(MONTHS)}) (\d{{1,2}})(?:st|nd|rd|th)?\b", lower):
        month, day = MONTHS.index(match.group(1)) + 1, int(match.group(2))
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
    plain = " ".join(value.strip(" \t\"'“”‘’").split()).rstrip(".,;:!?")
    return plain[:-1] if len(plain) > 1 and plain.endswith("了") and _HAN.match(plain[-2]) else plain  # 搬到杭州了


def _thing_type(subject: str) -> str:
    return re.sub(r"'s\b", "", subject.casefold())


def _negated(text: str) -> bool:
    return bool(re.match(r"^(?:not|no longer|never|n't)\b", text.strip(), re.IGNORECASE))


def _denied(sentence: str, start: int) -> bool:
    """Whether the clause before `start` negates what follows ("I don't have a dog called Rex")."""
    before = _CLAUSE_BREAK.split(sentence[max(0, start - 60) : start])[-1]
    return bool(_DENIAL.search(before))


def _my_things(sentence: str) -> list[Found]:
    """ "my X is Y" (0.9) and "our X is Y" (0.85) → type X, value Y."""
    found: list[Found] = []
    for match in MY_THING.finditer(sentence):
        owner, subject, value = match.group(1).casefold(), match.group(2), _ARTICLE.sub("", _clean(match.group(3)))
        if subject.split()[-1].casefold() in _NOT_SUBJECTS or _negated(value) or value.casefold() in _PRONOUNS:
            continue
        if _CHANGED.sub("", subject.casefold()) in _SPECIAL_SUBJECTS or _denied(sentence, match.start()):
            continue  # their own patterns have the special ones ("my new number is…" too)
        if value and len(value.split()) <= 12:
            found.append((_thing_type(subject), value, 0.9 if owner == "my" else 0.85))
    return found


def _retractions(sentence: str) -> list[Found]:
    """A diet the user no longer keeps: "no longer <diet>" (RETRACTIONS), negated by design."""
    return [(kind, prefix + match.group(1).casefold(), 0.9)
            for pattern, kind, prefix in RETRACTIONS for match in pattern.finditer(sentence)]


def _table_entities(sentence: str) -> list[Found]:
    """What the pattern table reads; a two-group row names the type from its first group."""
    found: list[Found] = []
    for pattern, kind, confidence in PATTERNS:
        for match in pattern.finditer(sentence):
            value = _clean(match.group(pattern.groups))
            if not value or value.casefold() in _PRONOUNS or _negated(value) or len(value.split()) > 12:
                continue
            if kind == "name" and confidence < 0.7 and value.casefold() in {"sure", "sorry", "fine", "here", "back"}:
                continue
            if _denied(sentence, match.start()):
                continue
            found.append((kind.format(match.group(1).casefold()) if pattern.groups > 1 else kind, value, confidence))
    return found


def sentence_entities(sentence: str, today: date) -> list[Found]:
    """The entities one sentence states (within its first MAX_SENTENCE characters)."""
    sentence = bounded(sentence)
    found: list[Found] = []
    question = sentence.rstrip().endswith(("?", "？")) or bool(_QUESTION.match(sentence.strip()))
    if question:  # a question states nothing, except perhaps the date it is about
        for phrase, when in _dates(sentence, today):
            found.append(("date", f"{phrase} ({when.isoformat()})", 0.5))
        return found
    for email in EMAIL.findall(sentence):
        found.append(("email", email, 0.98))
    if not found:
        for phone in PHONE.findall(sentence):
            found.append(("phone", " ".join(phone.split()), 0.9))
    mine = _my_things(sentence)
    found += mine + _table_entities(sentence) + _retractions(sentence)
    covered = " ".join(value for _, value, _ in mine).casefold()
    for phrase, when in _dates(sentence, today):
        if phrase.casefold() not in covered:
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
    # Every pattern reads the user's own statement: a type the scope table does not know came from
    # "my/our X is", 我的X是, and is theirs unless it is task state.
    entities: list[dict[str, Any]] = [
        {"type": k, "value": v, "confidence": c, "scope": default_scope(k, owned=True).value,
         "explicit": c >= EXPLICIT_FROM}
        for k, v, c in found
    ]
    return {"intent": intent_of(query, found), "entities": entities}


class RuleBasedEntityExtractor(EntityExtractor):
    async def extract(self, exchange: Exchange) -> object:
        # Pure CPU work, up to tens of milliseconds for a long query: in a worker thread, so that
        # the event loop (other turns' streams, /healthz) never waits for it.
        return await asyncio.to_thread(extraction, exchange.query, exchange.at.date())
