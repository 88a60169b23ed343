"""The entity tier: one current value per type, replaced values kept as history."""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from domain.errors import DomainError

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from datetime import datetime

    from domain.ids import ConversationId, MessageId


class EntityScope(enum.StrEnum):
    """How long a value holds: `user`, a lasting fact about the person (name, city, diet…), kept
    across their conversations; `conversation`, the state of the task at hand (this booking's date)."""

    USER = "user"
    CONVERSATION = "conversation"


class EntitySource(enum.StrEnum):
    """Where a value came from: `extracted` from a turn, or set by hand through the `api`."""

    EXTRACTED = "extracted"
    API = "api"


@dataclass(frozen=True, slots=True)
class Entity:
    """Something the user told us, e.g. type='date', value='tomorrow'.

    `updated_at` is when the value became current (its `valid_from`); `superseded_at` when a newer
    one replaced it. `explicit`: the user said it outright (not inferred by the extractor); only
    such a statement replaces a value set through the API. `source_conversation_id`: where the
    statement was made (None: set through the API).
    """

    type: str
    value: str
    confidence: float
    source_message_id: MessageId
    updated_at: datetime
    superseded_at: datetime | None = None
    scope: EntityScope = EntityScope.CONVERSATION
    source: EntitySource = EntitySource.EXTRACTED
    explicit: bool = True
    source_conversation_id: ConversationId | None = None

    def __post_init__(self) -> None:
        if not self.type.strip() or not self.value.strip():
            raise DomainError("an entity needs a type and a value")
        if not 0.0 <= self.confidence <= 1.0:
            raise DomainError(f"confidence must be within 0..1, got {self.confidence}")

    def reaches_prompt(self, min_confidence: float) -> bool:
        return self.superseded_at is None and self.confidence >= min_confidence

    def superseded(self, at: datetime) -> Entity:
        return replace(self, superseded_at=at)

    def same_value(self, other: Entity) -> bool:
        return _fold(self.value) == _fold(other.value)

    def may_replace(self, current: Entity) -> bool:
        """A value set through the API gives way only to the API or to the user's explicit word."""
        return current.source is not EntitySource.API or self.source is EntitySource.API or self.explicit


MAX_ENTITY_TYPE = 64
MAX_ENTITY_VALUE = 500
# The extractor's intent is kept as the entity of this type: the conversation's current task
# ("book", "correct"…), which makes a follow-up like "change it to Saturday" interpretable.
# Turns that carry no task (small talk) leave the intent as it was.
INTENT_TYPE = "intent"
TASKLESS_INTENTS = frozenset({"", "chat", "small_talk"})
ENTITY_HISTORY_LIMIT = 200  # superseded values kept per conversation, oldest dropped first


def _fold(value: str) -> str:
    return " ".join(value.split()).casefold()


def entity_type(raw: str) -> str:
    """A type as memory keys it: lower case, words joined by `_` ("Favourite colour" → "favourite_colour")."""
    kind = re.sub(r"[^\w]+", "_", raw.strip().casefold()).strip("_")
    if not kind:
        raise DomainError("an entity type needs at least one letter or digit")
    if len(kind) > MAX_ENTITY_TYPE:
        raise DomainError(f"an entity type is at most {MAX_ENTITY_TYPE} characters")
    return kind


@dataclass(frozen=True, slots=True)
class EntityChange:
    """What merging one new entity does: the type's current entity, and the one that left (to history)."""

    current: Entity
    retired: Entity | None = None


def merge_entity(current: Entity | None, incoming: Entity, min_confidence: float = 0.0) -> EntityChange:
    """A new value for a type replaces the old one, which becomes history from the new one's time.

    - The same value again refreshes the entity (its confidence, source and time), no history.
    - An extraction that arrives late (older than the current value, e.g. two turns' upkeep
      finishing out of order) never overwrites a newer value: it goes to history directly.
    - A value below `min_confidence` never displaces a current value at or above it: it is kept
      in history (superseded at once), so a passing, uncertain mention cannot push a confident
      fact out of the prompt.
    - A value set through the API is replaced only by the API again or by a later explicit
      statement of the user; an inferred value goes to history at once.
    """
    if current is not None and incoming.type != current.type:
        raise DomainError("merge_entity merges values of one type")
    if current is None:
        return EntityChange(incoming)
    if incoming.same_value(current) and not incoming.may_replace(current):
        return EntityChange(current)  # an inferred echo of a value set by hand keeps it as set
    if incoming.same_value(current):  # said again: the newer words, the higher confidence
        newer = incoming if incoming.updated_at >= current.updated_at else current
        return EntityChange(replace(newer, confidence=max(incoming.confidence, current.confidence)))
    if incoming.updated_at < current.updated_at:
        return EntityChange(current, incoming.superseded(current.updated_at))
    if incoming.confidence < min_confidence <= current.confidence or not incoming.may_replace(current):
        return EntityChange(current, incoming.superseded(incoming.updated_at))
    return EntityChange(incoming, current.superseded(incoming.updated_at))


def merge_entities(
    current: Mapping[str, Entity], incoming: Sequence[Entity], min_confidence: float = 0.0
) -> tuple[dict[str, Entity], list[Entity]]:
    """All of a batch merged in time order: the new current entities by type, and the retired ones."""
    merged, retired = dict(current), []
    for entity in sorted(incoming, key=lambda e: e.updated_at):
        change = merge_entity(merged.get(entity.type), entity, min_confidence)
        merged[entity.type] = change.current
        if change.retired is not None:
            retired.append(change.retired)
    return merged, retired


@dataclass(frozen=True, slots=True)
class EntitySheet:
    """A conversation's entity memory: the current value of each type, and superseded values."""

    current: tuple[Entity, ...] = ()
    history: tuple[Entity, ...] = ()

    def for_prompt(self, min_confidence: float) -> tuple[Entity, ...]:
        """Current, confident entities by type — a stable order keeps prompts cache-friendly."""
        return tuple(sorted((e for e in self.current if e.reaches_prompt(min_confidence)), key=lambda e: e.type))

    @property
    def intent(self) -> Entity | None:
        """The conversation's latest intent, if a turn stated one."""
        return next((e for e in self.current if e.type == INTENT_TYPE), None)

    def below(self, min_confidence: float) -> tuple[Entity, ...]:
        return tuple(sorted((e for e in self.current if not e.reaches_prompt(min_confidence)), key=lambda e: e.type))

    def history_of(self, kind: str) -> tuple[Entity, ...]:
        """Superseded values of one type, the most recently superseded first."""
        old = [e for e in self.history if e.type == kind]
        return tuple(sorted(old, key=lambda e: e.superseded_at or e.updated_at, reverse=True))
