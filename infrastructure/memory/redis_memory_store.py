"""Memory tiers in Redis, shared by every server process.

Keys (all under the configured prefix, e.g. ``memagent:``):

- ``window:{conversation_id}`` — the short-term store: a JSON list of Msg dicts (user/assistant
  pairs of the turns not archived yet). A cache of the record: it expires `window_ttl` seconds
  (default 24 h) after its last write, and a miss — expiry, a flushed Redis, an unreadable entry
  — is rebuilt from the MessageStore.
- ``archive:{conversation_id}`` — hash: archive entry id → JSON ``{id, conversation_id, summary,
  source_message_ids, created_at}``.
- ``entity:{conversation_id}`` — hash: entity type → JSON ``{type, value, confidence,
  source_message_id, updated_at, superseded_at: null, scope, source, explicit,
  source_conversation_id}``, the current values.
- ``entity_history:{conversation_id}`` — list of the superseded values (same JSON, with
  ``superseded_at``), oldest first, at most ENTITY_HISTORY_LIMIT.
- ``entity_warmed:{conversation_id}`` — "1" while the two keys above are a copy of the record
  (`EntityCache`), an empty one too; it expires `window_ttl` after its last warming, and the
  next read then takes the record's.
- ``upkeep:{conversation_id}`` — JSON ``{summarized_through, forgotten_at}``.
- ``upkeep_lock:{conversation_id}`` — the upkeep lock: a random token, expiring after the lease.

Archive, entities and upkeep state do not expire. They are a cache of the memory record in SQL
(`application.memory.recorded_memory_store`), which keeps the archive and every entity's whole
history: a flushed Redis loses none of them, so it need not be persistent. They go with
``DELETE /api/conversations/{id}/memory`` (`forget`). Every read-modify-write is an optimistic
transaction (WATCH/MULTI/EXEC, retried on a conflict) or, for a turn's append to its window, one
script (`redis_window_append.py`), so concurrent writers never lose or duplicate each other's
changes. Redis failures raise `MemoryUnavailable`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import secrets
import time
from typing import TYPE_CHECKING, Any, TypeVar, cast

from redis.exceptions import WatchError

from application.errors import MemoryUnavailable, UpkeepBusy
from application.ports.memory_store import EntityCache, EntityMemory, MemoryStore, UpkeepLedger
from domain.conversations.messages import Msg
from domain.errors import DomainError
from domain.memory.entities import ENTITY_HISTORY_LIMIT, Entity, EntitySheet, merge_entities
from domain.memory.summary import UpkeepState
from domain.memory.window import window_turn_ids
from infrastructure.memory.codec import (
    encode_window,
    entity_from_json,
    entity_to_json,
    entry_from_json,
    entry_to_json,
    state_from_json,
    state_to_json,
)
from infrastructure.memory.redis_window_append import APPEND, id_members

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable, Sequence

    from redis.asyncio.client import Pipeline
    from redis.commands.core import AsyncScript
    from redis.typing import EncodableT, FieldT

    from domain.ids import ConversationId
    from domain.memory.archive import ArchiveEntry
    from infrastructure.redis_client import RedisClient

log = logging.getLogger(__name__)
T = TypeVar("T")

DAY = 24 * 60 * 60.0
TRANSACTION_ATTEMPTS = 50
_RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"
_UNREADABLE = (ValueError, TypeError, KeyError)  # DomainError is a ValueError


class RedisMemoryStore(MemoryStore, EntityMemory, EntityCache, UpkeepLedger):
    def __init__(
        self,
        client: RedisClient,
        window_ttl: float = DAY,
        lock_lease: float = 300.0,
        lock_wait: float = 300.0,
    ) -> None:
        if window_ttl <= 0 or lock_lease <= 0 or lock_wait < 0:
            raise ValueError("window_ttl and lock_lease must be positive, lock_wait not negative")
        self._client = client
        self._ttl_ms = max(1, round(window_ttl * 1000))
        self._lease_ms = max(1, round(lock_lease * 1000))
        self._lock_wait = lock_wait
        self._append_script: AsyncScript | None = None

    def _key(self, kind: str, conversation_id: ConversationId) -> str:
        return self._client.key(kind, conversation_id)

    async def _transaction(
        self, action: str, keys: Sequence[str], attempt: Callable[[Pipeline], Awaitable[T]]
    ) -> T:
        """Run `attempt` under WATCH on `keys`; it reads, then queues writes after `pipe.multi()`
        and executes them. A concurrent change to a watched key makes it start again."""
        with self._client.translate(MemoryUnavailable, action):
            for tried in range(TRANSACTION_ATTEMPTS):
                async with self._client.commands.pipeline(transaction=True) as pipe:
                    try:
                        await pipe.watch(*keys)
                        return await attempt(pipe)
                    except WatchError:
                        pass
                # Jittered backoff, so that writers racing for one key do not collide forever.
                await asyncio.sleep(random.uniform(0, min(0.1, 0.001 * 2**tried)))  # noqa: S311
        log.warning("Redis: %s kept conflicting with other writers", action)
        raise MemoryUnavailable("The memory store is busy with other writers; try again shortly.")

    # --- short-term store and archive ---

    async def get_window(self, conversation_id: ConversationId) -> list[Msg] | None:
        with self._client.translate(MemoryUnavailable, f"reading window {conversation_id}"):
            raw = await self._client.commands.get(self._key("window", conversation_id))
        return None if raw is None else _decode_window(raw)

    async def save_window(self, conversation_id: ConversationId, window: Sequence[Msg]) -> None:
        with self._client.translate(MemoryUnavailable, f"saving window {conversation_id}"):
            key = self._key("window", conversation_id)
            await self._client.commands.set(key, encode_window(window), px=self._ttl_ms)

    async def restore_window(self, conversation_id: ConversationId, window: Sequence[Msg]) -> list[Msg]:
        key = self._key("window", conversation_id)

        async def attempt(pipe: Pipeline) -> list[Msg]:
            raw = await pipe.get(key)
            existing = None if raw is None else _decode_window(raw)
            if existing is not None:
                return existing
            pipe.multi()
            pipe.set(key, encode_window(window), px=self._ttl_ms)
            await pipe.execute()
            return list(window)

        return await self._transaction(f"restoring window {conversation_id}", [key], attempt)

    async def append_to_window(self, conversation_id: ConversationId, pair: Sequence[Msg]) -> bool:
        # One script call (redis_window_append.py), not an optimistic transaction: three round trips less.
        key = self._key("window", conversation_id)
        if self._append_script is None:  # registered on first use: building the store builds no client
            self._append_script = self._client.commands.register_script(APPEND)
        with self._client.translate(MemoryUnavailable, f"appending to window {conversation_id}"):
            appended = await self._append_script(
                keys=[key], args=[encode_window(pair), self._ttl_ms, *id_members(pair)]
            )
        return bool(appended)

    async def archive(self, conversation_id: ConversationId) -> list[ArchiveEntry]:
        with self._client.translate(MemoryUnavailable, f"reading the archive of {conversation_id}"):
            raw = await self._client.commands.hvals(self._key("archive", conversation_id))
        entries = []
        for item in raw:
            try:
                entries.append(entry_from_json(item))
            except _UNREADABLE as error:
                log.warning("unreadable archive entry of conversation %s skipped: %s", conversation_id, error)
        return sorted(entries, key=lambda e: e.created_at)

    async def fold_into_archive(self, conversation_id: ConversationId, entry: ArchiveEntry) -> bool:
        window_key, archive_key = self._key("window", conversation_id), self._key("archive", conversation_id)
        sources = list(entry.source_message_ids)

        async def attempt(pipe: Pipeline) -> bool:
            raw = await pipe.get(window_key)
            window = None if raw is None else _decode_window(raw)
            if window is None or await pipe.hexists(archive_key, entry.id):
                return False
            try:
                if window_turn_ids(window)[: len(sources)] != sources:
                    return False
            except DomainError:
                return False
            pipe.multi()
            pipe.set(window_key, encode_window(window[2 * len(sources) :]), px=self._ttl_ms)
            pipe.hset(archive_key, entry.id, entry_to_json(entry))
            await pipe.execute()
            return True

        return await self._transaction(f"archiving turns of {conversation_id}", [window_key, archive_key], attempt)

    async def forget(self, conversation_id: ConversationId) -> None:
        # Every key this store keeps for a conversation must be listed here (not the lock: its holder has it).
        kinds = ("window", "archive", "entity", "entity_history", "entity_warmed", "upkeep")
        keys = [self._key(kind, conversation_id) for kind in kinds]
        with self._client.translate(MemoryUnavailable, f"forgetting conversation {conversation_id}"):
            await self._client.commands.delete(*keys)

    # --- entities ---

    async def entity_sheet(self, conversation_id: ConversationId) -> EntitySheet:
        with self._client.translate(MemoryUnavailable, f"reading the entities of {conversation_id}"):
            async with self._client.commands.pipeline(transaction=True) as pipe:
                pipe.hgetall(self._key("entity", conversation_id))
                pipe.lrange(self._key("entity_history", conversation_id), 0, -1)
                current, history = await pipe.execute()
        return EntitySheet(
            tuple(_entities(current.values(), conversation_id)), tuple(_entities(history, conversation_id))
        )

    async def record_entities(
        self, conversation_id: ConversationId, entities: Sequence[Entity], min_confidence: float = 0.0
    ) -> None:
        if not entities:
            return
        current_key, history_key = self._key("entity", conversation_id), self._key("entity_history", conversation_id)

        async def attempt(pipe: Pipeline) -> None:
            # The client decodes replies (decode_responses=True), which redis-py's types cannot express.
            raw = cast("dict[str, str]", await pipe.hgetall(current_key))
            current = {e.type: e for e in _entities(raw.values(), conversation_id)}
            merged, retired = merge_entities(current, entities, min_confidence)
            changed: dict[FieldT, EncodableT] = {
                kind: entity_to_json(e) for kind, e in merged.items() if current.get(kind) != e
            }
            pipe.multi()
            if changed:
                pipe.hset(current_key, mapping=changed)
            if retired:
                pipe.rpush(history_key, *(entity_to_json(e) for e in retired))
                pipe.ltrim(history_key, -ENTITY_HISTORY_LIMIT, -1)
            await pipe.execute()

        await self._transaction(f"recording entities of {conversation_id}", [current_key, history_key], attempt)

    async def cached_entities(self, conversation_id: ConversationId) -> EntitySheet | None:
        keys = [self._key(kind, conversation_id) for kind in ("entity_warmed", "entity", "entity_history")]
        with self._client.translate(MemoryUnavailable, f"reading the cached entities of {conversation_id}"):
            async with self._client.commands.pipeline(transaction=True) as pipe:
                pipe.exists(keys[0])
                pipe.hgetall(keys[1])
                pipe.lrange(keys[2], 0, -1)
                warmed, current, history = await pipe.execute()
        if not warmed:
            return None
        return EntitySheet(
            tuple(_entities(current.values(), conversation_id)), tuple(_entities(history, conversation_id))
        )

    async def warm_entities(self, conversation_id: ConversationId, sheet: EntitySheet) -> None:
        current_key, history_key = self._key("entity", conversation_id), self._key("entity_history", conversation_id)
        with self._client.translate(MemoryUnavailable, f"caching the entities of {conversation_id}"):
            async with self._client.commands.pipeline(transaction=True) as pipe:
                pipe.delete(current_key, history_key)
                if sheet.current:
                    pipe.hset(current_key, mapping={e.type: entity_to_json(e) for e in sheet.current})
                if sheet.history:
                    pipe.rpush(history_key, *(entity_to_json(e) for e in sheet.history[-ENTITY_HISTORY_LIMIT:]))
                pipe.set(self._key("entity_warmed", conversation_id), "1", px=self._ttl_ms)
                await pipe.execute()

    async def drop_entities(self, conversation_id: ConversationId) -> None:
        keys = [self._key(kind, conversation_id) for kind in ("entity_warmed", "entity", "entity_history")]
        with self._client.translate(MemoryUnavailable, f"dropping the cached entities of {conversation_id}"):
            await self._client.commands.delete(*keys)

    async def remove_entity(self, conversation_id: ConversationId, kind: str) -> bool:
        current_key, history_key = self._key("entity", conversation_id), self._key("entity_history", conversation_id)

        async def attempt(pipe: Pipeline) -> bool:
            if not await pipe.hexists(current_key, kind):
                return False
            history = cast("list[str]", await pipe.lrange(history_key, 0, -1))  # decoded replies, as above
            kept = [item for item in history if _type_of(item) != kind]
            pipe.multi()
            pipe.hdel(current_key, kind)
            if len(kept) != len(history):
                pipe.delete(history_key)
                if kept:
                    pipe.rpush(history_key, *kept)
            await pipe.execute()
            return True

        action = f"removing entity {kind} of {conversation_id}"
        return await self._transaction(action, [current_key, history_key], attempt)

    # --- upkeep ledger ---

    async def upkeep_state(self, conversation_id: ConversationId) -> UpkeepState:
        with self._client.translate(MemoryUnavailable, f"reading the upkeep state of {conversation_id}"):
            raw = await self._client.commands.get(self._key("upkeep", conversation_id))
        if raw is None:
            return UpkeepState()
        try:
            return state_from_json(raw)
        except _UNREADABLE as error:
            log.warning("unreadable upkeep state of conversation %s ignored: %s", conversation_id, error)
            return UpkeepState()

    async def save_upkeep_state(self, conversation_id: ConversationId, state: UpkeepState) -> None:
        with self._client.translate(MemoryUnavailable, f"saving the upkeep state of {conversation_id}"):
            await self._client.commands.set(self._key("upkeep", conversation_id), state_to_json(state))

    @contextlib.asynccontextmanager
    async def exclusive(self, conversation_id: ConversationId) -> AsyncIterator[None]:
        key, token = self._key("upkeep_lock", conversation_id), secrets.token_hex(16)
        deadline, pause = time.monotonic() + self._lock_wait, 0.02
        with self._client.translate(MemoryUnavailable, f"taking the upkeep lock of {conversation_id}"):
            while not await self._client.commands.set(key, token, nx=True, px=self._lease_ms):
                if time.monotonic() >= deadline:
                    raise UpkeepBusy(f"conversation {conversation_id}'s upkeep is busy")
                await asyncio.sleep(pause)
                pause = min(pause * 2, 0.5)
        try:
            yield
        finally:
            with self._client.translate(MemoryUnavailable, f"releasing the upkeep lock of {conversation_id}"):
                await self._client.commands.eval(_RELEASE, 1, key, token)


def _decode_window(raw: str | bytes) -> list[Msg] | None:
    """The cached window, or None (a miss) when the entry cannot be read back.

    An entry written by an older or newer release should cost a rebuild, not a turn.
    """
    try:
        items: list[dict[str, Any]] = json.loads(raw)
        return [Msg.from_dict(item) for item in items]
    except (ValueError, TypeError, KeyError, DomainError):
        return None


def _entities(raw: Any, conversation_id: ConversationId) -> list[Entity]:
    found = []
    for item in raw:
        try:
            found.append(entity_from_json(item))
        except _UNREADABLE as error:
            log.warning("unreadable entity of conversation %s skipped: %s", conversation_id, error)
    return found


def _type_of(raw: str) -> str | None:
    try:
        return str(json.loads(raw)["type"])
    except _UNREADABLE:
        return None
