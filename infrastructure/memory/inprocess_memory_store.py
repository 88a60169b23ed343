"""Memory in this process's dicts: for one server process (the embedded default).

Nothing survives a restart, and nothing needs to: the window is rebuilt from the message record,
and archive entries and entities from the memory record in SQL (`RecordedMemoryStore`); only the
upkeep state starts again empty.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import OrderedDict
from dataclasses import replace
from typing import TYPE_CHECKING

from application.errors import UpkeepBusy
from application.ports.memory_store import (
    EmbeddingCache,
    EntityCache,
    EntityMemory,
    MemoryStore,
    UpkeepLedger,
    UserFactCache,
)
from domain.memory.entities import ENTITY_HISTORY_LIMIT, Entity, EntitySheet, merge_entities
from domain.memory.summary import UpkeepState
from domain.memory.window import window_turn_ids

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Mapping, Sequence

    from domain.conversations.messages import Msg
    from domain.ids import AppId, ConversationId, EndUserId, OwnerId
    from domain.memory.archive import ArchiveEntry
    from domain.memory.user_facts import FactHolder

DEFAULT_LOCK_WAIT = 300.0


class _WaitedTooLong(Exception):
    """A lock was not had in time (raised by the acquire alone, never by the work under the lock)."""


class _Locks:
    """A lock per conversation while someone holds it or waits for it, gone once nobody does: a
    process serves conversation after conversation, and a lock left behind by each would stay."""

    def __init__(self) -> None:
        self._locks: dict[ConversationId, tuple[asyncio.Lock, list[int]]] = {}

    @contextlib.asynccontextmanager
    async def held(self, conversation_id: ConversationId, wait: float | None = None) -> AsyncIterator[None]:
        """The conversation's lock, waited for at most `wait` seconds (`_WaitedTooLong` past it)."""
        entry = self._locks.get(conversation_id)
        if entry is None:
            entry = self._locks[conversation_id] = (asyncio.Lock(), [0])
        lock, users = entry
        users[0] += 1
        try:
            try:
                async with asyncio.timeout(wait):
                    await lock.acquire()
            except TimeoutError as timeout:
                raise _WaitedTooLong from timeout
            try:
                yield
            finally:
                lock.release()
        finally:
            users[0] -= 1
            if not users[0]:
                del self._locks[conversation_id]


class InProcessMemoryStore(MemoryStore, EntityMemory, EntityCache, UpkeepLedger):
    """Every tier of every conversation, in dicts; changes to one conversation hold its lock."""

    def __init__(self, lock_wait: float = DEFAULT_LOCK_WAIT) -> None:
        self._windows: dict[ConversationId, list[Msg]] = {}
        self._archives: dict[ConversationId, dict[str, ArchiveEntry]] = {}
        self._entities: dict[ConversationId, dict[str, Entity]] = {}
        self._history: dict[ConversationId, list[Entity]] = {}
        self._warmed: set[ConversationId] = set()  # whose entities are a copy of the record's
        self._states: dict[ConversationId, UpkeepState] = {}
        self._changes = _Locks()
        self._upkeep = _Locks()
        self._lock_wait = lock_wait

    def _changing(self, conversation_id: ConversationId) -> contextlib.AbstractAsyncContextManager[None]:
        return self._changes.held(conversation_id)

    # --- short-term store and archive ---

    async def get_window(self, conversation_id: ConversationId) -> list[Msg] | None:
        window = self._windows.get(conversation_id)
        return list(window) if window is not None else None

    async def save_window(self, conversation_id: ConversationId, window: Sequence[Msg]) -> None:
        async with self._changing(conversation_id):
            self._windows[conversation_id] = list(window)

    async def restore_window(self, conversation_id: ConversationId, window: Sequence[Msg]) -> list[Msg]:
        async with self._changing(conversation_id):
            return list(self._windows.setdefault(conversation_id, list(window)))

    async def append_to_window(self, conversation_id: ConversationId, pair: Sequence[Msg]) -> bool:
        async with self._changing(conversation_id):
            window = self._windows.get(conversation_id)
            if window is None:
                return False
            present = {m.id for m in window}
            if not any(m.id in present for m in pair):  # a turn already there is not added twice
                window.extend(pair)
            return True

    async def archive(self, conversation_id: ConversationId) -> list[ArchiveEntry]:
        return sorted(self._archives.get(conversation_id, {}).values(), key=lambda e: e.created_at)

    async def fold_into_archive(self, conversation_id: ConversationId, entry: ArchiveEntry) -> bool:
        async with self._changing(conversation_id):
            window = self._windows.get(conversation_id)
            archive = self._archives.setdefault(conversation_id, {})
            sources = list(entry.source_message_ids)
            if window is None or entry.id in archive or window_turn_ids(window)[: len(sources)] != sources:
                return False
            self._windows[conversation_id] = window[2 * len(sources) :]
            archive[entry.id] = entry
            return True

    async def forget(self, conversation_id: ConversationId) -> None:
        async with self._changing(conversation_id):
            for tier in (self._windows, self._archives, self._entities, self._history, self._states):
                tier.pop(conversation_id, None)
            self._warmed.discard(conversation_id)

    # --- entities ---

    async def entity_sheet(self, conversation_id: ConversationId) -> EntitySheet:
        current = self._entities.get(conversation_id, {})
        return EntitySheet(tuple(current.values()), tuple(self._history.get(conversation_id, [])))

    async def record_entities(
        self, conversation_id: ConversationId, entities: Sequence[Entity], min_confidence: float = 0.0
    ) -> None:
        async with self._changing(conversation_id):
            merged, retired = merge_entities(self._entities.get(conversation_id, {}), entities, min_confidence)
            self._entities[conversation_id] = merged
            history = [*self._history.get(conversation_id, []), *retired]
            self._history[conversation_id] = history[-ENTITY_HISTORY_LIMIT:]

    async def cached_entities(self, conversation_id: ConversationId) -> EntitySheet | None:
        if conversation_id not in self._warmed:
            return None
        return await self.entity_sheet(conversation_id)

    async def warm_entities(self, conversation_id: ConversationId, sheet: EntitySheet) -> None:
        async with self._changing(conversation_id):
            self._entities[conversation_id] = {e.type: e for e in sheet.current}
            self._history[conversation_id] = list(sheet.history[-ENTITY_HISTORY_LIMIT:])
            self._warmed.add(conversation_id)

    async def drop_entities(self, conversation_id: ConversationId) -> None:
        async with self._changing(conversation_id):
            self._entities.pop(conversation_id, None)
            self._history.pop(conversation_id, None)
            self._warmed.discard(conversation_id)

    async def remove_entity(self, conversation_id: ConversationId, kind: str) -> bool:
        async with self._changing(conversation_id):
            current = self._entities.get(conversation_id, {})
            if kind not in current:
                return False
            del current[kind]
            self._history[conversation_id] = [e for e in self._history.get(conversation_id, []) if e.type != kind]
            return True

    # --- upkeep ledger ---

    async def upkeep_state(self, conversation_id: ConversationId) -> UpkeepState:
        return replace(self._states.get(conversation_id, UpkeepState()))

    async def save_upkeep_state(self, conversation_id: ConversationId, state: UpkeepState) -> None:
        self._states[conversation_id] = state

    @contextlib.asynccontextmanager
    async def exclusive(self, conversation_id: ConversationId) -> AsyncIterator[None]:
        try:
            async with self._upkeep.held(conversation_id, self._lock_wait):
                yield
        except _WaitedTooLong as timeout:
            raise UpkeepBusy(f"conversation {conversation_id}'s upkeep is busy") from timeout


class InProcessEmbeddingCache(EmbeddingCache):
    """At most `max_entries` vectors, least recently used dropped first; entries expire after `ttl`
    seconds on `clock` (monotonic; a test passes its own)."""

    def __init__(
        self,
        max_entries: int = 10_000,
        ttl: float = 30 * 24 * 3600.0,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_entries < 1 or ttl <= 0:
            raise ValueError("max_entries must be >= 1 and ttl positive")
        self._vectors: OrderedDict[str, tuple[float, list[float]]] = OrderedDict()
        self._max = max_entries
        self._ttl = ttl
        self._clock = clock

    async def cached_vectors(self, keys: Sequence[str]) -> list[list[float] | None]:
        now, found = self._clock(), list[list[float] | None]()
        for key in keys:
            item = self._vectors.get(key)
            if item is None or item[0] < now:
                self._vectors.pop(key, None)
                found.append(None)
                continue
            self._vectors.move_to_end(key)
            found.append(list(item[1]))
        return found

    async def cache_vectors(self, vectors: Mapping[str, Sequence[float]]) -> None:
        expires = self._clock() + self._ttl
        for key, vector in vectors.items():
            self._vectors[key] = (expires, list(vector))
            self._vectors.move_to_end(key)
        while len(self._vectors) > self._max:
            self._vectors.popitem(last=False)


class InProcessUserFactCache(UserFactCache):
    """End users' facts in this process, for the embedded default: at most `max_users` users (the
    least recently used dropped first), each user's copies lapsing `ttl` seconds after their last
    warming on `clock`. A second process on the same database (`memagent mcp` beside `memagent
    serve`) writes facts this one is never told of, so no copy is kept for long."""

    def __init__(
        self, ttl: float = 60.0, max_users: int = 10_000, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if ttl <= 0 or max_users < 1:
            raise ValueError("ttl must be positive and max_users at least 1")
        self._sheets: OrderedDict[tuple[OwnerId, EndUserId], tuple[float, dict[AppId | None, EntitySheet]]] = (
            OrderedDict()
        )
        self._ttl = ttl
        self._max = max_users
        self._clock = clock

    async def cached_user_facts(self, holder: FactHolder) -> EntitySheet | None:
        return self._held(holder.owner, holder.end_user).get(holder.agent_id)

    async def warm_user_facts(self, holder: FactHolder, sheet: EntitySheet) -> None:
        key = (holder.owner, holder.end_user)
        sheets = self._held(*key)
        sheets[holder.agent_id] = sheet
        self._sheets[key] = (self._clock() + self._ttl, sheets)
        self._sheets.move_to_end(key)
        while len(self._sheets) > self._max:
            self._sheets.popitem(last=False)

    async def drop_user_facts(self, owner: OwnerId, end_user: EndUserId) -> None:
        self._sheets.pop((owner, end_user), None)

    def _held(self, owner: OwnerId, end_user: EndUserId) -> dict[AppId | None, EntitySheet]:
        """The user's copies that have not lapsed (a lapsed user's are dropped)."""
        held = self._sheets.get((owner, end_user))
        if held is None or held[0] < self._clock():
            self._sheets.pop((owner, end_user), None)
            return {}
        self._sheets.move_to_end((owner, end_user))
        return held[1]
