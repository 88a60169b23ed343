"""Entity extraction of one finished turn, merged into entity memory (a memory upkeep job).

Each value goes where its scope says (`domain.memory_entities.EntityScope`): a lasting fact about
the person to the end user's facts (`UserFacts`, shared by the account's agents or the agent's own,
per `domain.user_memory`), the state of the task at hand to the conversation's entities. An agent
without user memory keeps every value in the conversation. The extraction's intent is kept too, as
the conversation's entity of type `intent` (see domain.memory_entities).

Malformed extraction output is dropped with a log line; the stored entities are untouched.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from domain.agents import EntryPoint
from domain.entity_extraction import read_extraction, without_junk
from domain.memory import Exchange, MemoryPolicy
from domain.memory_entities import INTENT_TYPE, TASKLESS_INTENTS, Entity, EntityScope
from domain.user_memory import holder_of

if TYPE_CHECKING:
    from application.ports.memory_models import EntityExtractor
    from application.ports.memory_record import UserFacts
    from application.ports.memory_store import EntityMemory
    from domain.agent import AgentConfig
    from domain.conversation import Message
    from domain.entity_extraction import ExtractedEntity
    from domain.ids import ConversationId

log = logging.getLogger(__name__)


class ExtractEntities:
    def __init__(
        self, extractor: EntityExtractor, entities: EntityMemory, policy: MemoryPolicy, facts: UserFacts | None = None
    ) -> None:
        self._extractor = extractor
        self._entities = entities
        self._policy = policy
        self._facts = facts

    async def __call__(self, finished: Message, config: AgentConfig) -> int:
        """Extract the exchange's entities and merge them into memory (the inline extraction of one
        turn); how many were kept."""
        return await self.record(finished, await self._extractor.extract(Exchange.of(finished)), config)

    async def known(self, conversation_id: ConversationId) -> tuple[tuple[str, str], ...]:
        """The conversation's current entities as (type, value), for an upkeep to read."""
        sheet = await self._entities.entity_sheet(conversation_id)
        return tuple((e.type, e.value) for e in sheet.for_prompt(self._policy.entity_min_confidence))

    async def record(self, finished: Message, payload: object, config: AgentConfig) -> int:
        """Merge the raw extraction of one turn into memory; how many were kept."""
        extraction = without_junk(read_extraction(payload), finished.query)
        for problem in extraction.problems:
            log.warning("entity extraction of message %s: dropped: %s", finished.id, problem)
        # A debugger turn is the builder trying a draft: it never writes an end user's real facts.
        debugging = finished.entry_point == EntryPoint.DEBUGGER.value
        holder = holder_of(finished, config) if self._facts is not None and not debugging else None
        facts = [self._entity(e, finished) for e in extraction.entities if holder and e.scope is EntityScope.USER]
        entities = [self._entity(e, finished) for e in extraction.entities
                    if not holder or e.scope is not EntityScope.USER]
        if extraction.intent.casefold() not in TASKLESS_INTENTS:
            entities.append(Entity(INTENT_TYPE, extraction.intent, 1.0, finished.id, finished.created_at,
                                   source_conversation_id=finished.conversation_id))
        floor = self._policy.entity_min_confidence
        if facts and self._facts is not None and holder is not None:
            await self._facts.record_user_facts(holder, facts, floor)
        if entities:
            await self._entities.record_entities(finished.conversation_id, entities, floor)
        return len(facts) + len(entities)

    @staticmethod
    def _entity(found: ExtractedEntity, finished: Message) -> Entity:
        return Entity(
            found.type, found.value, found.confidence, finished.id, finished.created_at, scope=found.scope,
            explicit=found.explicit, source_conversation_id=finished.conversation_id,
        )
