"""Entity extraction of one finished turn, merged into entity memory (a memory upkeep job).

Each value goes where its scope says (`domain.memory.entities.EntityScope`): a lasting fact about
the person to the end user's facts (`UserFacts`, shared by the account's agents or the agent's own,
per `domain.memory.user_facts`), the state of the task at hand to the conversation's entities. An agent
without user memory keeps every value in the conversation. The extraction's intent is kept too, as
the conversation's entity of type `intent` (see domain.memory.entities).

Malformed extraction output is dropped with a log line; the stored entities are untouched. The
extraction runs on the agent's memory model (`AgentConfig.upkeep_model`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from domain.conversations.conversation import EntryPoint
from domain.memory.entities import INTENT_TYPE, TASKLESS_INTENTS, Entity, EntityScope
from domain.memory.entity_extraction import read_extraction, without_junk
from domain.memory.user_facts import facts_for_prompt
from domain.memory.window import Exchange, MemoryPolicy

if TYPE_CHECKING:
    from application.ports.memory_models import EntityExtractor
    from application.ports.memory_record import UserFacts
    from application.ports.memory_store import EntityMemory
    from application.ports.profile_work import OnProfile
    from domain.agents.config import AgentConfig
    from domain.conversations.conversation import Message
    from domain.memory.entity_extraction import ExtractedEntity
    from domain.memory.user_facts import FactHolder

log = logging.getLogger(__name__)


class ExtractEntities:
    def __init__(
        self, extractor: OnProfile[EntityExtractor], entities: EntityMemory, policy: MemoryPolicy,
        facts: UserFacts | None = None,
    ) -> None:
        self._extractor = extractor
        self._entities = entities
        self._policy = policy
        self._facts = facts

    async def __call__(self, finished: Message, config: AgentConfig) -> int:
        """Extract the exchange's entities and merge them into memory (the inline extraction of one
        turn); how many were kept."""
        extracted = await self._extractor(config.upkeep_model).extract(Exchange.of(finished))
        return await self.record(finished, extracted, config)

    async def known(self, finished: Message, config: AgentConfig) -> tuple[tuple[str, str], ...]:
        """What the conversation's prompt knows, as (type, value), for an upkeep to read: its entities,
        then the user's facts of the other types, so that a correction said in a later conversation
        ("I'm a teacher now") can be given the type of the fact it corrects (`job`)."""
        floor = self._policy.entity_min_confidence
        sheet = await self._entities.entity_sheet(finished.conversation_id)
        holder = self._holder(finished, config)
        facts = (await self._facts.user_facts(holder)).for_prompt(floor) if self._facts and holder else ()
        return tuple((e.type, e.value) for e in facts_for_prompt(sheet.for_prompt(floor), facts))

    async def record(self, finished: Message, payload: object, config: AgentConfig) -> int:
        """Merge the raw extraction of one turn into memory; how many were kept."""
        extraction = without_junk(read_extraction(payload), finished.query)
        for problem in extraction.problems:
            log.warning("entity extraction of message %s: dropped: %s", finished.id, problem)
        holder = self._holder(finished, config)
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

    def _holder(self, finished: Message, config: AgentConfig) -> FactHolder | None:
        """Whose user facts the turn reads and writes; None when there are none to write."""
        # A debugger turn is the builder trying a draft: it never writes an end user's real facts.
        debugging = finished.entry_point == EntryPoint.DEBUGGER.value
        return config.holder_of(finished) if self._facts is not None and not debugging else None

    @staticmethod
    def _entity(found: ExtractedEntity, finished: Message) -> Entity:
        return Entity(
            found.type, found.value, found.confidence, finished.id, finished.created_at, scope=found.scope,
            explicit=found.explicit, source_conversation_id=finished.conversation_id,
        )
