"""End users' facts cached in Redis, shared by every server and job worker process.

``{prefix}user_facts:{["owner", "end_user"]}`` is a hash: the holder's agent id ("" for the facts
the account's agents share) → JSON ``{current: [...], history: [...]}`` (the entity JSON of
``entity:{conversation_id}``), the whole sheet as the record had it when warmed. A write to the user's
facts drops the whole hash, so it holds no holder's copy that a write made stale. The hash expires
`ttl` seconds after it was last warmed (a day, as a window does): the next read takes the record's.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from application.errors import MemoryUnavailable
from application.ports.memory_store import UserFactCache
from domain.memory.entities import EntitySheet
from infrastructure.memory.codec import entity_from_json, entity_to_json

if TYPE_CHECKING:
    from domain.ids import EndUserId, OwnerId
    from domain.memory.user_facts import FactHolder
    from infrastructure.redis_client import RedisClient

DAY = 24 * 60 * 60.0
_UNREADABLE = (ValueError, TypeError, KeyError)  # DomainError is a ValueError


class RedisUserFactCache(UserFactCache):
    def __init__(self, client: RedisClient, ttl: float = DAY) -> None:
        if ttl <= 0:
            raise ValueError("ttl must be positive")
        self._client = client
        self._ttl_ms = max(1, round(ttl * 1000))

    def _key(self, owner: OwnerId, end_user: EndUserId) -> str:
        # JSON, so that no owner and end user pair reads as another ("a:b", "c" against "a", "b:c").
        return self._client.key("user_facts", json.dumps([owner, end_user], ensure_ascii=False))

    async def cached_user_facts(self, holder: FactHolder) -> EntitySheet | None:
        with self._client.translate(MemoryUnavailable, "reading cached user facts"):
            raw = await self._client.commands.hget(self._key(holder.owner, holder.end_user), holder.agent_id or "")
        return None if raw is None else _decode(raw)

    async def warm_user_facts(self, holder: FactHolder, sheet: EntitySheet) -> None:
        key = self._key(holder.owner, holder.end_user)
        with self._client.translate(MemoryUnavailable, "caching user facts"):
            async with self._client.commands.pipeline(transaction=True) as pipe:
                pipe.hset(key, holder.agent_id or "", _encode(sheet))
                pipe.pexpire(key, self._ttl_ms)
                await pipe.execute()

    async def drop_user_facts(self, owner: OwnerId, end_user: EndUserId) -> None:
        with self._client.translate(MemoryUnavailable, "dropping cached user facts"):
            await self._client.commands.delete(self._key(owner, end_user))


def _encode(sheet: EntitySheet) -> str:
    return json.dumps({"current": [entity_to_json(e) for e in sheet.current],
                       "history": [entity_to_json(e) for e in sheet.history]}, ensure_ascii=False)


def _decode(raw: str | bytes) -> EntitySheet | None:
    """The cached sheet, or None (a miss) when it cannot be read back: an entry written by another
    release costs a read of the record, not a turn."""
    try:
        data = json.loads(raw)
        return EntitySheet(tuple(entity_from_json(e) for e in data["current"]),
                           tuple(entity_from_json(e) for e in data["history"]))
    except _UNREADABLE:
        return None
