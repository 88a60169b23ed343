"""Entity extraction of one finished turn, merged into entity memory (a memory upkeep job).

The extraction's intent is kept too, as the entity of type `intent` (see domain.memory_entities).

Malformed extraction output is dropped with a log line; the stored entities are untouched.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from domain.entity_extraction import read_extraction, without_junk
from domain.memory import Exchange, MemoryPolicy
from domain.memory_entities import INTENT_TYPE, TASKLESS_INTENTS, Entity

if TYPE_CHECKING:
    from application.ports.memory_models import EntityExtractor
    from application.ports.memory_store import EntityMemory
    from domain.conversation import Message

log = logging.getLogger(__name__)


class ExtractEntities:
    def __init__(self, extractor: EntityExtractor, entities: EntityMemory, policy: MemoryPolicy) -> None:
        self._extractor = extractor
        self._entities = entities
        self._policy = policy

    async def __call__(self, finished: Message) -> int:
        """Extract the exchange's entities and merge them into entity memory; how many were kept."""
        payload = await self._extractor.extract(Exchange.of(finished))
        extraction = without_junk(read_extraction(payload), finished.query)
        for problem in extraction.problems:
            log.warning("entity extraction of message %s: dropped: %s", finished.id, problem)
        entities = [
            Entity(e.type, e.value, e.confidence, finished.id, finished.created_at) for e in extraction.entities
        ]
        if extraction.intent.casefold() not in TASKLESS_INTENTS:
            entities.append(Entity(INTENT_TYPE, extraction.intent, 1.0, finished.id, finished.created_at))
        if entities:
            await self._entities.record_entities(
                finished.conversation_id, entities, self._policy.entity_min_confidence
            )
        return len(entities)
