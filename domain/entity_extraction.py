"""Reading an entity extractor's output: `{intent, entities: [{type, value, confidence}]}`.

The output comes from a model (or a rule set) and is untrusted: anything malformed — not
JSON, not an object, wrong types, a confidence outside 0..1, an empty type or value — is
dropped and named in `problems`, never stored. One bad entity does not spoil the others.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from domain.errors import DomainError
from domain.memory_entities import MAX_ENTITY_VALUE, entity_type

MAX_ENTITIES = 20  # per exchange; more is noise


@dataclass(frozen=True, slots=True)
class ExtractedEntity:
    type: str
    value: str
    confidence: float


@dataclass(frozen=True, slots=True)
class Extraction:
    intent: str = ""
    entities: tuple[ExtractedEntity, ...] = ()
    problems: tuple[str, ...] = ()


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
        entity, problem = _entity(item)
        if entity is None:
            problems.append(f"entity {index}: {problem}")
            continue
        kept = found.get(entity.type)
        if kept is None or entity.confidence >= kept.confidence:
            found[entity.type] = entity
    entities = tuple(found.values())
    if len(entities) > MAX_ENTITIES:
        problems.append(f"{len(entities) - MAX_ENTITIES} entities over the limit of {MAX_ENTITIES} dropped")
        entities = entities[:MAX_ENTITIES]
    return Extraction(intent.strip()[:100], entities, tuple(problems))


def _entity(item: Any) -> tuple[ExtractedEntity | None, str]:
    if not isinstance(item, dict):
        return None, f"a {type(item).__name__}, not an object"
    kind, value, confidence = item.get("type"), item.get("value"), item.get("confidence")
    if not isinstance(kind, str):
        return None, "type is not a string"
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return None, "value is not a string"
    if isinstance(confidence, bool) or not isinstance(confidence, int | float):
        return None, "confidence is not a number"
    if not math.isfinite(confidence) or not 0.0 <= confidence <= 1.0:
        return None, f"confidence {confidence} is outside 0..1"
    text = " ".join(str(value).split())
    if not text:
        return None, "value is empty"
    if len(text) > MAX_ENTITY_VALUE:
        return None, f"value is longer than {MAX_ENTITY_VALUE} characters"
    try:
        normalised = entity_type(kind)
    except DomainError as error:
        return None, str(error)
    return ExtractedEntity(normalised, text, float(confidence)), ""


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
