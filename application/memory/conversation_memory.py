"""The memory API's use cases: read a conversation's memory, correct or forget parts of it.

Owner only: an unknown conversation and someone else's are the same `NotFound`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from application.errors import InvalidInput, NotFound
from application.ports.conversation_reader import ConversationReader
from application.ports.conversation_writer import ConversationWriter
from application.ports.message_reader import MessageReader
from domain.errors import DomainError
from domain.ids import ConversationId, MessageId, OwnerId
from domain.memory.entities import MAX_ENTITY_VALUE, Entity, EntitySheet, entity_type
from domain.memory.summary import UpkeepState
from domain.memory.window import MemoryPolicy

if TYPE_CHECKING:
    from application.ports.memory_store import EntityMemory, MemoryStore, UpkeepLedger
    from application.ports.runtime import Clock
    from domain.conversations.conversation import Conversation
    from domain.memory.archive import ArchiveEntry


class _Store(ConversationReader, MessageReader, ConversationWriter, Protocol):
    """The record the window is read from and the rolling summary saved to."""


@dataclass(frozen=True, slots=True)
class MemoryView:
    conversation_id: ConversationId
    summary: str
    entities: EntitySheet
    archive: tuple[ArchiveEntry, ...]
    min_confidence: float


class ConversationMemory:
    def __init__(
        self,
        store: _Store,
        memory: MemoryStore,
        entities: EntityMemory,
        ledger: UpkeepLedger,
        clock: Clock,
        policy: MemoryPolicy | None = None,
    ) -> None:
        self._store = store
        self._memory = memory
        self._entities = entities
        self._ledger = ledger
        self._clock = clock
        self._policy = policy or MemoryPolicy()

    async def read(self, conversation_id: ConversationId, owner: OwnerId) -> MemoryView:
        conversation = await self._owned(conversation_id, owner)
        sheet = await self._entities.entity_sheet(conversation_id)
        archive = await self._memory.archive(conversation_id)
        return MemoryView(
            conversation_id, conversation.summary, sheet, tuple(archive), self._policy.entity_min_confidence
        )

    async def set_entity(
        self, conversation_id: ConversationId, owner: OwnerId, kind: str, value: str, confidence: float = 1.0
    ) -> Entity:
        """Set a type's value by hand (source message: none); the old value becomes history."""
        await self._owned(conversation_id, owner)
        value = " ".join(value.split())
        if not value or len(value) > MAX_ENTITY_VALUE:
            raise InvalidInput(f"value must be 1 to {MAX_ENTITY_VALUE} characters.")
        if not math.isfinite(confidence) or not 0.0 <= confidence <= 1.0:
            raise InvalidInput("confidence must be within 0 and 1.")
        try:
            entity = Entity(entity_type(kind), value, confidence, MessageId(""), self._clock.now())
        except DomainError as error:
            raise InvalidInput(f"{error}.") from error
        await self._entities.record_entities(conversation_id, [entity])
        return entity

    async def delete_entity(self, conversation_id: ConversationId, owner: OwnerId, kind: str) -> None:
        """Forget one type: its current value and its history."""
        await self._owned(conversation_id, owner)
        try:
            normalised = entity_type(kind)
        except DomainError as error:
            raise NotFound(f"No entity {kind!r} in conversation {conversation_id!r}.") from error
        if not await self._entities.remove_entity(conversation_id, normalised):
            raise NotFound(f"No entity {kind!r} in conversation {conversation_id!r}.")

    async def forget(self, conversation_id: ConversationId, owner: OwnerId) -> None:
        """Forget everything but the message record: the summary, entities and their history, the
        archive and the short-term store (rebuilt from the record at the next turn). Upkeep of
        turns from before is not applied afterwards."""
        conversation = await self._owned(conversation_id, owner)
        await self.erase(conversation_id)
        await self._store.save_summary(conversation.with_summary("", self._clock.now()))

    async def erase(self, conversation_id: ConversationId) -> bool:
        """`forget` without the summary (on the conversation's own row) and without asking whose it
        is: for a conversation being deleted, or an end user being forgotten. Whether a cached
        window was dropped."""
        async with self._ledger.exclusive(conversation_id):
            newest = await self._store.recent_messages(conversation_id, 1)
            cached = await self._memory.get_window(conversation_id) is not None
            await self._memory.forget(conversation_id)
            await self._ledger.save_upkeep_state(
                conversation_id,
                UpkeepState(summarized_through=newest[-1].id if newest else None, forgotten_at=self._clock.now()),
            )
        return cached

    async def _owned(self, conversation_id: ConversationId, owner: OwnerId) -> Conversation:
        conversation = await self._store.get_conversation(conversation_id, owner)
        if conversation is None:
            raise NotFound(f"Conversation {conversation_id!r} was not found.")
        return conversation
