"""The in-process adapters, with what a test needs beyond their ports: failures on demand, a
count of round trips, and setting up state that no port writes.

Each double is the real adapter (infrastructure/…/inprocess_*.py), so what a unit test sees is
what the contract suites check; only the additions live here. Pass a test's clock
(`FakeClock(step=0).monotonic`, moved on with `advance`) to control leases, retention and expiry.
"""

from __future__ import annotations

import asyncio
import time
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from application.errors import EventStoreUnavailable, MemoryUnavailable
from infrastructure.events.inprocess_event_log import InProcessEventLog
from infrastructure.memory.inprocess_memory_store import DEFAULT_LOCK_WAIT, InProcessMemoryStore

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Sequence

    from domain.conversations.messages import Msg
    from domain.conversations.thoughts import AgentThought
    from domain.ids import ConversationId, TaskId
    from domain.memory.archive import ArchiveEntry
    from domain.memory.entities import Entity, EntitySheet
    from domain.memory.summary import UpkeepState


class FailingMemoryStore(InProcessMemoryStore):
    """InProcessMemoryStore whose methods raise MemoryUnavailable(`failure`) on demand: every one
    while `fail` is set, else those named in `failing` (e.g. {"entity_sheet"})."""

    def __init__(self, lock_wait: float = DEFAULT_LOCK_WAIT) -> None:
        super().__init__(lock_wait)
        self.fail = False
        self.failing: set[str] = set()
        self.failure = "The memory store is unavailable."

    def _check(self, method: str) -> None:
        if self.fail or method in self.failing:
            raise MemoryUnavailable(self.failure)

    # --- set-up that no port offers ---

    def evict_window(self, conversation_id: ConversationId) -> None:
        """The short-term store of one conversation is gone (a cache evicts it): the next read misses."""
        self._windows.pop(conversation_id, None)

    def seed_archive(self, conversation_id: ConversationId, entries: Sequence[ArchiveEntry]) -> None:
        """Replace the conversation's archive, as if these entries had been folded earlier."""
        self._archives[conversation_id] = {e.id: e for e in entries}

    # --- the ports, each behind the failure switch ---

    async def get_window(self, conversation_id: ConversationId) -> list[Msg] | None:
        self._check("get_window")
        return await super().get_window(conversation_id)

    async def save_window(self, conversation_id: ConversationId, window: Sequence[Msg]) -> None:
        self._check("save_window")
        await super().save_window(conversation_id, window)

    async def restore_window(self, conversation_id: ConversationId, window: Sequence[Msg]) -> list[Msg]:
        self._check("restore_window")
        return await super().restore_window(conversation_id, window)

    async def append_to_window(self, conversation_id: ConversationId, pair: Sequence[Msg]) -> bool:
        self._check("append_to_window")
        return await super().append_to_window(conversation_id, pair)

    async def archive(self, conversation_id: ConversationId) -> list[ArchiveEntry]:
        self._check("archive")
        return await super().archive(conversation_id)

    async def fold_into_archive(self, conversation_id: ConversationId, entry: ArchiveEntry) -> bool:
        self._check("fold_into_archive")
        return await super().fold_into_archive(conversation_id, entry)

    async def forget(self, conversation_id: ConversationId) -> None:
        self._check("forget")
        await super().forget(conversation_id)

    async def entity_sheet(self, conversation_id: ConversationId) -> EntitySheet:
        self._check("entity_sheet")
        return await super().entity_sheet(conversation_id)

    async def record_entities(
        self, conversation_id: ConversationId, entities: Sequence[Entity], min_confidence: float = 0.0
    ) -> None:
        self._check("record_entities")
        await super().record_entities(conversation_id, entities, min_confidence)

    async def remove_entity(self, conversation_id: ConversationId, kind: str) -> bool:
        self._check("remove_entity")
        return await super().remove_entity(conversation_id, kind)

    async def cached_entities(self, conversation_id: ConversationId) -> EntitySheet | None:
        self._check("cached_entities")
        return await super().cached_entities(conversation_id)

    async def warm_entities(self, conversation_id: ConversationId, sheet: EntitySheet) -> None:
        self._check("warm_entities")
        await super().warm_entities(conversation_id, sheet)

    async def drop_entities(self, conversation_id: ConversationId) -> None:
        self._check("drop_entities")
        await super().drop_entities(conversation_id)

    async def upkeep_state(self, conversation_id: ConversationId) -> UpkeepState:
        self._check("upkeep_state")
        return await super().upkeep_state(conversation_id)

    async def save_upkeep_state(self, conversation_id: ConversationId, state: UpkeepState) -> None:
        self._check("save_upkeep_state")
        await super().save_upkeep_state(conversation_id, state)

    @asynccontextmanager
    async def exclusive(self, conversation_id: ConversationId) -> AsyncIterator[None]:
        self._check("exclusive")
        async with super().exclusive(conversation_id):
            yield


class FailingEventLog(InProcessEventLog):
    """InProcessEventLog that counts its appends (`appends`: each call one round trip where there
    is a server), records the tasks `opened`, and fails the next `failures` appends with
    EventStoreUnavailable, storing nothing."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(clock=clock)
        self.failures = 0
        self.appends = 0
        self.opened: list[TaskId] = []

    async def open(self, task_id: TaskId) -> None:
        self.opened.append(task_id)
        await super().open(task_id)

    def append_soon(self, task_id: TaskId, thoughts: Sequence[AgentThought]) -> asyncio.Future[int]:
        self.appends += 1
        if not self.failures:
            return super().append_soon(task_id, thoughts)
        self.failures -= 1
        failed: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        failed.set_exception(EventStoreUnavailable("The event log is unavailable."))
        return failed
