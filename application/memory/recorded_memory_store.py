"""The memory tiers with SQL as their record and the memory store (Redis or in-process) as a cache
in front of it (docs/ARCHITECTURE.md §5).

- The window is the cache's, rebuilt from the message record on a miss (`ShortTermMemory`).
- Archive entries are read from the record. Folding is the cache's compare-and-set (it decides
  which worker folds a batch); the entry is then kept in the record. An entry the record missed
  (the database failed just then) is still in the cache's archive and is kept at the next read.
- Entities are merged in the record, then the cache is warmed with the record's sheet (and the
  record read again, so that a slower reader's older sheet is not what the cache keeps). Reads
  come from the cache, a warmed empty sheet too (no read of the record per turn for a
  conversation without entities); a cache holding none, or unreachable, is read from the record
  (and warmed).
- Forgetting drops the cache, the record, then the cache again, so no read meanwhile brings back
  what was forgotten.
- Upkeep state and the upkeep lock are the cache's.

So a restart of the embedded default, a Redis flush or a Redis outage loses no tier.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Protocol

from application.best_effort import best_effort
from application.errors import ApplicationError
from application.memory.cache_warming import warm_as_recorded
from application.ports.memory_record import ArchiveRecord, MemoryForgetting
from application.ports.memory_store import EntityCache, EntityMemory, MemoryStore, UpkeepLedger

if TYPE_CHECKING:
    from collections.abc import Sequence
    from contextlib import AbstractAsyncContextManager

    from domain.conversations.messages import Msg
    from domain.ids import ConversationId
    from domain.memory.archive import ArchiveEntry
    from domain.memory.entities import Entity, EntitySheet
    from domain.memory.summary import UpkeepState

log = logging.getLogger(__name__)


class MemoryCache(MemoryStore, EntityMemory, EntityCache, UpkeepLedger, Protocol):
    """What a memory store adapter is: every cache port at once."""


class MemoryRecord(ArchiveRecord, EntityMemory, MemoryForgetting, Protocol):
    """What the SQL record is, for one conversation's tiers."""


class RecordedMemoryStore(MemoryStore, EntityMemory, UpkeepLedger):
    def __init__(self, cache: MemoryCache, record: MemoryRecord) -> None:
        self._cache = cache
        self._record = record

    # --- the window: the cache's ---

    async def get_window(self, conversation_id: ConversationId) -> list[Msg] | None:
        return await self._cache.get_window(conversation_id)

    async def save_window(self, conversation_id: ConversationId, window: Sequence[Msg]) -> None:
        await self._cache.save_window(conversation_id, window)

    async def restore_window(self, conversation_id: ConversationId, window: Sequence[Msg]) -> list[Msg]:
        return await self._cache.restore_window(conversation_id, window)

    async def append_to_window(self, conversation_id: ConversationId, pair: Sequence[Msg]) -> bool:
        return await self._cache.append_to_window(conversation_id, pair)

    # --- the archive: the record's ---

    async def archive(self, conversation_id: ConversationId) -> list[ArchiveEntry]:
        kept = await self._record.archive_entries(conversation_id)
        cached, _ = await best_effort(self._cache.archive(conversation_id), [], f"cached archive of {conversation_id}")
        known = {entry.id for entry in kept}
        missed = [entry for entry in cached if entry.id not in known]
        if not missed:
            return kept
        await self._record.add_archive_entries(missed)
        return sorted([*kept, *missed], key=lambda e: (e.created_at, e.id))

    async def fold_into_archive(self, conversation_id: ConversationId, entry: ArchiveEntry) -> bool:
        if not await self._cache.fold_into_archive(conversation_id, entry):
            return False
        try:
            await self._record.add_archive_entries([entry])
        except ApplicationError as failure:  # the cache holds it: kept at the next read of the archive
            log.warning("archive entry %s of %s not kept in the record yet: %s", entry.id, conversation_id,
                        failure.message)
        return True

    async def forget(self, conversation_id: ConversationId) -> None:
        """The cache, the record, then the cache again. A read in between brings nothing back: once
        the cache's archive is gone, no entry only it held is kept in the record again; entities a
        read warmed from the record meanwhile go with the second forget of the cache."""
        await self._cache.forget(conversation_id)
        await self._record.forget_conversation(conversation_id)
        await self._cache.forget(conversation_id)

    # --- entities: merged in the record, read through the cache ---

    async def entity_sheet(self, conversation_id: ConversationId) -> EntitySheet:
        cached, unreachable = await best_effort(
            self._cache.cached_entities(conversation_id), None, f"cached entities of {conversation_id}"
        )
        if cached is not None:
            return cached
        sheet = await self._record.entity_sheet(conversation_id)
        if unreachable is None:  # an empty sheet too: the next turns then read none
            await self._warm(conversation_id, sheet)
        return sheet

    async def record_entities(
        self, conversation_id: ConversationId, entities: Sequence[Entity], min_confidence: float = 0.0
    ) -> None:
        await self._record.record_entities(conversation_id, entities, min_confidence)
        await self._refresh(conversation_id)

    async def remove_entity(self, conversation_id: ConversationId, kind: str) -> bool:
        removed = await self._record.remove_entity(conversation_id, kind)
        await self._refresh(conversation_id)
        return removed

    async def _refresh(self, conversation_id: ConversationId) -> None:
        """After a write: the older copy dropped first, so that a failing read of the record (or a
        failing cache) leaves no copy rather than one that misses the write."""
        await best_effort(self._cache.drop_entities(conversation_id), None,
                          f"dropping the cached entities of {conversation_id}")
        await self._warm(conversation_id, await self._record.entity_sheet(conversation_id))

    async def _warm(self, conversation_id: ConversationId, sheet: EntitySheet) -> None:
        await warm_as_recorded(
            sheet, lambda copy: self._cache.warm_entities(conversation_id, copy),
            lambda: self._record.entity_sheet(conversation_id), lambda: self._cache.drop_entities(conversation_id),
            f"entities of {conversation_id}",
        )

    # --- upkeep: the cache's ---

    async def upkeep_state(self, conversation_id: ConversationId) -> UpkeepState:
        return await self._cache.upkeep_state(conversation_id)

    async def save_upkeep_state(self, conversation_id: ConversationId, state: UpkeepState) -> None:
        await self._cache.save_upkeep_state(conversation_id, state)

    def exclusive(self, conversation_id: ConversationId) -> AbstractAsyncContextManager[None]:
        return self._cache.exclusive(conversation_id)
