from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from application.errors import MemoryUnavailable
from application.ports.memory_store import MemoryStore
from domain.errors import DomainError
from domain.ids import ConversationId
from domain.messages import Msg
from infrastructure.redis_client import RedisClient

DAY = 24 * 60 * 60.0


class RedisMemoryStore(MemoryStore):
    """Short-term windows cached in Redis, shared by every server process.

    This is a cache, not a record: the window of a conversation lives under
    ``{prefix}window:{conversation_id}`` as a JSON list of Msg dicts and expires
    `window_ttl` seconds (default 24 h) after it was last saved. A miss — expiry, a
    flushed Redis, an unreadable entry — is rebuilt from the MessageStore, which holds
    the durable record. Redis failures raise `MemoryUnavailable`.
    """

    def __init__(self, client: RedisClient, window_ttl: float = DAY) -> None:
        if window_ttl <= 0:
            raise ValueError("window_ttl must be positive")
        self._client = client
        self._ttl_ms = max(1, round(window_ttl * 1000))

    def _window_key(self, conversation_id: ConversationId) -> str:
        return self._client.key("window", conversation_id)

    async def get_window(self, conversation_id: ConversationId) -> list[Msg] | None:
        with self._client.translate(MemoryUnavailable, f"reading window {conversation_id}"):
            raw = await self._client.commands.get(self._window_key(conversation_id))
        if raw is None:
            return None
        return _decode_window(raw)

    async def save_window(self, conversation_id: ConversationId, window: Sequence[Msg]) -> None:
        payload = json.dumps([msg.to_dict() for msg in window], ensure_ascii=False)
        with self._client.translate(MemoryUnavailable, f"saving window {conversation_id}"):
            await self._client.commands.set(self._window_key(conversation_id), payload, px=self._ttl_ms)

    async def forget(self, conversation_id: ConversationId) -> None:
        # Every key this store keeps for a conversation must be listed here.
        with self._client.translate(MemoryUnavailable, f"forgetting conversation {conversation_id}"):
            await self._client.commands.delete(self._window_key(conversation_id))


def _decode_window(raw: str | bytes) -> list[Msg] | None:
    """The cached window, or None (a miss) when the entry cannot be read back.

    An entry written by an older or newer release should cost a rebuild, not a turn.
    """
    try:
        items: list[dict[str, Any]] = json.loads(raw)
        return [Msg.from_dict(item) for item in items]
    except (ValueError, TypeError, KeyError, DomainError):
        return None
