"""Reading an entity extractor's output: `{intent, entities: [{type, value, confidence, scope, explicit}]}`.

The output comes from a model (or a rule set) and is untrusted: anything malformed — not
JSON, not an object, wrong types, a confidence outside 0..1, an empty type or value — is
dropped and named in `problems`, never stored. One bad entity does not spoil the others.

A type is read as its fact's slot (`domain.memory.fact_slots.fact_slot`: `new_manager` and `boss` are
`manager`), so that a correction replaces the fact it corrects; a user fact's value loses the words
of its change (`plain_value`: "green now" is "green").

`scope` and `explicit` are optional: a missing or invalid `scope` falls back to the type's
default (`default_scope`), a missing or invalid `explicit` to False. Both only qualify a value
that is otherwise sound, so a bad one is named in `problems` but drops nothing.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from domain.errors import DomainError
from domain.memory.entities import MAX_ENTITY_VALUE, EntityScope, entity_type
from domain.memory.fact_slots import fact_slot, plain_value

MAX_ENTITIES = 20  # per exchange; more is noise


@dataclass(frozen=True, slots=True)
class ExtractedEntity:
    """One value an extractor found. `scope`: a lasting fact about the user, or the state of this
    conversation's task (see `default_scope`). `explicit`: the user stated the value outright in
    their own words; False for an inferred one, which never replaces a value set through the API.

    The defaults are those of a `date` read without `scope` or `explicit`: the conservative reading
    of model output, so that an entity built by hand as (type, value, confidence) still compares equal.
    """

    type: str
    value: str
    confidence: float
    scope: EntityScope = EntityScope.CONVERSATION
    explicit: bool = False


@dataclass(frozen=True, slots=True)
class Extraction:
    intent: str = ""
    entities: tuple[ExtractedEntity, ...] = ()
    problems: tuple[str, ...] = ()


# The type → scope table. A `user` type is a lasting fact about the person, worth carrying into
# their other conversations; everything else is `conversation` state (the date of this booking,
# its destination, the current intent or task, a time, a number of people…), since carrying a
# task's details into an unrelated conversation misleads more than forgetting a fact does.
USER_FACT_TYPES = frozenset((
    # who they are
    "name", "full_name", "first_name", "last_name", "nickname", "age", "birthday", "date_of_birth", "gender",
    "pronouns", "nationality", "language", "languages", "native_language", "blood_type",
    # how to reach them, where they live
    "email", "phone", "phone_number", "mobile", "address", "home_address", "city", "hometown", "country",
    "home_country", "timezone", "time_zone",
    # what they do
    "job", "occupation", "profession", "employer", "company", "workplace", "school", "university",
    "education", "learning", "plays", "supports", "saving_for",
    # what they eat and like
    "diet", "allergy", "allergies", "likes", "dislikes", "preference", "preferences", "hobby", "hobbies",
    "coffee_order", "usual_order", "drink_order",
    # who they live with, what they own, who they deal with
    "family", "spouse", "partner", "wife", "husband", "children", "kids", "pet", "pets", "car", "manager",
    "doctor", "dentist",
))
# `<relation>_…` is a fact about someone close to the user ("dog_name", "wife_birthday", "son_age"),
# where a bare `*_name` may well be the task's ("restaurant_name", "hotel_name").
RELATIONS = frozenset((
    "dog", "cat", "pet", "kitten", "puppy", "rabbit", "hamster", "parrot",
    "wife", "husband", "partner", "spouse", "boyfriend", "girlfriend", "fiance", "fiancee",
    "son", "daughter", "child", "kid", "baby", "mother", "mom", "mum", "father", "dad", "brother", "sister",
    "grandmother", "grandfather", "grandma", "grandpa", "aunt", "uncle", "cousin", "friend", "best_friend",
))
USER_PREFIXES = ("favourite_", "favorite_", "fav_", "preferred_")  # "favourite_colour", "preferred_airline"
USER_SUFFIXES = ("_preference", "_allergy", "_diet")  # "seat_preference", "food_allergy"
# The task state among the user's own things: a type holding one of these words (or its plural)
# is `conversation` even when the user says "my …" ("my flight is at 9", "my trip to Rome is in May",
# "my order number is 1234"), unless the table above has it ("coffee_order", "seat_preference").
# Chinese ones count anywhere in the type (我的航班是…).
TASK_NOUNS = frozenset((
    "booking", "reservation", "flight", "train", "bus", "trip", "journey", "itinerary", "hotel", "room",
    "restaurant", "table", "ticket", "seat", "meeting", "appointment", "call", "interview", "deadline",
    "destination", "departure", "arrival", "date", "time", "day", "plan", "schedule", "order", "delivery",
    "parcel", "package", "reference", "confirmation", "budget", "request", "task", "reminder", "intent",
    "conversation", "chat",
))
TASK_NOUNS_ZH = ("航班", "预订", "预约", "会议", "订单", "酒店", "行程", "日期", "时间", "目的地", "票", "座位",
                 "房间", "餐厅", "任务", "计划")


def default_scope(kind: str, *, owned: bool = False) -> EntityScope:
    """The scope of an entity type by the table above. `owned`: the user stated the value as a thing
    of theirs ("my car is…", "our anniversary is…", 我的车是…): a type the table does not know is then
    a user fact, unless it is task state (TASK_NOUNS). Otherwise unknown types are conversation state."""
    key = re.sub(r"[^\w]+", "_", kind.strip().casefold()).strip("_")  # as `entity_type` keys it
    user = (
        key in USER_FACT_TYPES or key in RELATIONS or key.startswith(USER_PREFIXES) or key.endswith(USER_SUFFIXES)
        or any(key.startswith(f"{relation}_") for relation in RELATIONS)
    )
    return EntityScope.USER if user or (owned and not _task_state(key)) else EntityScope.CONVERSATION


def _task_state(key: str) -> bool:
    """Whether a type (keyed) names the task's state: it holds a word of TASK_NOUNS, or its plural."""
    padded = f"_{key}_"
    return (any(f"_{noun}_" in padded or f"_{noun}s_" in padded for noun in TASK_NOUNS)
            or any(noun in padded for noun in TASK_NOUNS_ZH))


def read_extraction(payload: object) -> Extraction:
    """The well-formed part of an extractor's output, and what was wrong with the rest."""
    if isinstance(payload, str | bytes):
        try:
            payload = json.loads(payload)
        except ValueError:
            return Extraction(problems=("the output is not JSON",))
    if not isinstance(payload, dict):
        return Extraction(problems=(f"the output is a {type(payload).__name__}, not an object",))
    problems: list[str] = []
    intent = payload.get("intent", "")
    if not isinstance(intent, str):
        problems.append(f"intent is a {type(intent).__name__}, not a string")
        intent = ""
    items = payload.get("entities")
    if not isinstance(items, list):
        problems.append("entities is missing or not a list")
        return Extraction(intent.strip()[:100], (), tuple(problems))
    found: dict[str, ExtractedEntity] = {}
    for index, item in enumerate(items):
        entity, notes = _entity(item)
        problems.extend(f"entity {index}: {note}" for note in notes)
        if entity is None:
            continue
        kept = found.get(entity.type)
        if kept is None or entity.confidence >= kept.confidence:
            found[entity.type] = entity
    entities = tuple(found.values())
    if len(entities) > MAX_ENTITIES:
        problems.append(f"{len(entities) - MAX_ENTITIES} entities over the limit of {MAX_ENTITIES} dropped")
        entities = entities[:MAX_ENTITIES]
    return Extraction(intent.strip()[:100], entities, tuple(problems))


def _entity(item: Any) -> tuple[ExtractedEntity | None, tuple[str, ...]]:
    """The entity, or None; and what was wrong: why it was dropped, or what of it was defaulted."""
    if not isinstance(item, dict):
        return None, (f"a {type(item).__name__}, not an object",)
    kind, value, confidence = item.get("type"), item.get("value"), item.get("confidence")
    if not isinstance(kind, str):
        return None, ("type is not a string",)
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return None, ("value is not a string",)
    if isinstance(confidence, bool) or not isinstance(confidence, int | float):
        return None, ("confidence is not a number",)
    if not math.isfinite(confidence) or not 0.0 <= confidence <= 1.0:
        return None, (f"confidence {confidence} is outside 0..1",)
    text = " ".join(str(value).split())
    if not text:
        return None, ("value is empty",)
    if len(text) > MAX_ENTITY_VALUE:
        return None, (f"value is longer than {MAX_ENTITY_VALUE} characters",)
    try:
        normalised = fact_slot(entity_type(kind))  # a correction's words name the fact it corrects
    except DomainError as error:
        return None, (str(error),)
    scope, scope_problem = _scope(item.get("scope"), normalised)
    explicit, explicit_problem = _explicit(item.get("explicit"))
    notes = tuple(note for note in (scope_problem, explicit_problem) if note)
    if scope is EntityScope.USER:  # a lasting fact is kept without the words of its change ("green now")
        text = plain_value(text)
    return ExtractedEntity(normalised, text, float(confidence), scope, explicit), notes


def _scope(raw: object, kind: str) -> tuple[EntityScope, str]:
    # null counts as absent: models fill optional fields with it
    if raw is None:
        return default_scope(kind), ""
    folded = raw.strip().casefold() if isinstance(raw, str) else None
    for scope in EntityScope:
        if folded == scope.value:
            return scope, ""
    fallback = default_scope(kind)
    return fallback, f"scope {raw!r} is neither user nor conversation, the type's {fallback} is used"


def _explicit(raw: object) -> tuple[bool, str]:
    # Absent means inferred: only the user's explicit word may replace a value set through the
    # API, so model output that does not say so must not (and "true" as text is not a claim to trust).
    if raw is None or isinstance(raw, bool):
        return raw is True, ""
    return False, f"explicit is a {type(raw).__name__}, not a boolean, taken as false"


# The junk guard. A value is dropped when it holds no content word (only function words,
# punctuation or symbols: "it", "the one", "？"), or when the query is a question and the value's
# content words are exactly the question's: for "what is my name?", name "my name" only repeats the
# question, it states nothing (while "I'm Ada, what's the weather?" still yields name "Ada").
# Numbers are content ("42", "0612"). Chinese counts each Han character as a word.
FUNCTION_WORDS = frozenset((
    "a", "an", "the", "this", "that", "these", "those", "it", "its", "it's", "i", "me", "my", "mine", "you",
    "your", "yours", "he", "him", "his", "she", "her", "hers", "we", "us", "our", "they", "them", "their", "is",
    "am", "are", "was", "were", "be", "been", "being", "do", "does", "did", "have", "has", "had", "of", "to",
    "in", "on", "at", "for", "with", "by", "from", "and", "or", "but", "not", "no", "yes", "so", "as", "what",
    "which", "who", "whom", "whose", "when", "where", "why", "how", "there", "here", "some", "any", "one",
    "ones", "thing", "things", "something", "anything", "please", "thanks", "thank", "ok", "okay", "sure",
    "maybe", "just", "also", "very", "really", "s", "m", "re", "ll", "ve", "d", "t"
))
FUNCTION_HAN = frozenset("的了吗呢吧啊呀是我你他她它们这那个什么怎么哪谁和与在有没不也就都很请么")
_WORD = re.compile(r"[^\W_]+")
_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_QUESTION_WORDS = frozenset((
    "what", "which", "who", "whom", "whose", "when", "where", "why", "how", "is", "are", "do", "does", "did",
    "can", "could", "will", "would"
))


def content_words(text: str) -> frozenset[str]:
    """The words of `text` that say something: casefolded, without function words."""
    words: set[str] = set()
    for word in _WORD.findall(text.casefold()):
        han = _HAN.findall(word)
        if han:
            words.update(c for c in han if c not in FUNCTION_HAN)
            rest = _HAN.sub(" ", word).split()
            words.update(w for w in rest if w not in FUNCTION_WORDS)
        elif word not in FUNCTION_WORDS:
            words.add(word)
    return frozenset(words)


def is_question(text: str) -> bool:
    stripped = text.strip()
    first = stripped.split(maxsplit=1)[0].casefold() if stripped else ""
    return stripped.endswith(("?", "？", "吗", "呢")) or first in _QUESTION_WORDS


def junk_problem(value: str, query: str) -> str:
    """Why an extracted value is junk (see above), or "" when it is worth keeping."""
    said = content_words(value)
    if not said:
        return "holds no content word"
    if is_question(query) and said == content_words(query):
        return "only repeats the question"
    return ""


def without_junk(extraction: Extraction, query: str) -> Extraction:
    """The extraction less its junk values, each named in `problems`."""
    kept, problems = [], list(extraction.problems)
    for entity in extraction.entities:
        problem = junk_problem(entity.value, query)
        if problem:
            problems.append(f"{entity.type} {entity.value!r} {problem}")
        else:
            kept.append(entity)
    return Extraction(extraction.intent, tuple(kept), tuple(problems))
