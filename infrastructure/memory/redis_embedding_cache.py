"""Embedding vectors cached in Redis: ``{prefix}embedding:{sha256(model, text)}`` → JSON list of
floats, expiring `ttl` seconds (default 30 days) after it was written. A miss is embedded again."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from application.errors import MemoryUnavailable
from application.ports.memory_store import EmbeddingCache

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from infrastructure.redis_client import RedisClient

MONTH = 30 * 24 * 3600.0


class RedisEmbeddingCache(EmbeddingCache):
    def __init__(self, client: RedisClient, ttl: float = MONTH) -> None:
        if ttl <= 0:
            raise ValueError("ttl must be positive")
        self._client = client
        self._ttl_ms = max(1, round(ttl * 1000))

    async def cached_vectors(self, keys: Sequence[str]) -> list[list[float] | None]:
        if not keys:
            return []
        with self._client.translate(MemoryUnavailable, "reading cached embeddings"):
            raw = await self._client.commands.mget([self._client.key("embedding", k) for k in keys])
        return [_decode(item) for item in raw]

    async def cache_vectors(self, vectors: Mapping[str, Sequence[float]]) -> None:
        if not vectors:
            return
        with self._client.translate(MemoryUnavailable, "caching embeddings"):
            async with self._client.commands.pipeline(transaction=False) as pipe:
                for key, vector in vectors.items():
                    pipe.set(self._client.key("embedding", key), json.dumps(list(vector)), px=self._ttl_ms)
                await pipe.execute()


def _decode(raw: str | bytes | None) -> list[float] | None:
    if raw is None:
        return None
    try:
        vector = json.loads(raw)
        return [float(x) for x in vector] if isinstance(vector, list) else None
    except (ValueError, TypeError):
        return None
