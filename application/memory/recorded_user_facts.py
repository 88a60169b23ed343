"""End users' facts with SQL as their record and the memory cache (Redis or in-process) in front
of it, so that a turn's recall reads no table for them (docs/ARCHITECTURE.md §5).

- A read takes the cached sheet, an empty one too; none held (or the cache unreachable), the
  record's, which is then warmed and the record read again until it reads as cached: a reader that
  read before a write and warms after it sees the write on that second read and warms again.
- A write goes to the record, then drops every cached sheet of that end user. A reader that warmed
  an older sheet before the drop loses it with the drop; one that warms after it checks the record.
- Forgetting an end user drops the cache, forgets the record, then drops the cache again, so no
  read meanwhile brings back what was forgotten.

A cache that failed to drop after a write may hold the older sheet until it lapses (a day in
Redis): the same bound as a conversation's cached entities.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from application.best_effort import best_effort
from application.memory.cache_warming import warm_as_recorded
from application.ports.memory_record import MemoryForgetting, UserFacts

if TYPE_CHECKING:
    from collections.abc import Sequence

    from application.ports.memory_store import UserFactCache
    from domain.ids import AppId, ConversationId, EndUserId, OwnerId
    from domain.memory.entities import Entity, EntitySheet
    from domain.memory.user_facts import FactHolder, ForgetCounts


class UserFactRecord(UserFacts, MemoryForgetting, Protocol):
    """What the SQL record is, for end users' facts."""


class RecordedUserFacts(UserFacts, MemoryForgetting):
    def __init__(self, cache: UserFactCache, record: UserFactRecord) -> None:
        self._cache = cache
        self._record = record

    async def user_facts(self, holder: FactHolder) -> EntitySheet:
        cached, unreachable = await best_effort(self._cache.cached_user_facts(holder), None, "cached user facts")
        if cached is not None:
            return cached
        sheet = await self._record.user_facts(holder)
        if unreachable is None:
            await self._warm(holder, sheet)
        return sheet

    async def record_user_facts(
        self, holder: FactHolder, entities: Sequence[Entity], min_confidence: float = 0.0
    ) -> None:
        await self._record.record_user_facts(holder, entities, min_confidence)
        if entities:
            await self._drop(holder.owner, holder.end_user)

    async def remove_user_fact(self, holder: FactHolder, kind: str) -> bool:
        removed = await self._record.remove_user_fact(holder, kind)
        await self._drop(holder.owner, holder.end_user)
        return removed

    async def forget_user(self, owner: OwnerId, end_user: EndUserId) -> ForgetCounts:
        await self._drop(owner, end_user)
        counts = await self._record.forget_user(owner, end_user)
        await self._drop(owner, end_user)
        return counts

    async def forget_conversation(self, conversation_id: ConversationId) -> None:
        await self._record.forget_conversation(conversation_id)  # its entities: no user's facts

    async def conversations_with_memory(
        self, owner: OwnerId, end_user: EndUserId, agent_id: AppId | None = None
    ) -> list[ConversationId]:
        return await self._record.conversations_with_memory(owner, end_user, agent_id)

    async def _warm(self, holder: FactHolder, sheet: EntitySheet) -> None:
        await warm_as_recorded(
            sheet, lambda copy: self._cache.warm_user_facts(holder, copy), lambda: self._record.user_facts(holder),
            lambda: self._cache.drop_user_facts(holder.owner, holder.end_user), "user facts",
        )

    async def _drop(self, owner: OwnerId, end_user: EndUserId) -> None:
        await best_effort(self._cache.drop_user_facts(owner, end_user), None, "dropping cached user facts")
