"""Reading an entity extractor's output: `{intent, entities: [{type, value, confidence}]}`.

The output comes from a model (or a rule set) and is untrusted: anything malformed — not
JSON, not an object, wrong types, a confidence outside 0..1, an empty type or value — is
dropped and named in `problems`, never stored. One bad entity does not spoil the others.
"""

from __future__ import annotations

import json
import math
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
