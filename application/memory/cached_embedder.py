"""An Embedder with a cache in front: the same text with the same model is embedded once.

Keys are a SHA-256 of the model name and the text, so vectors of different models never mix
and no text is kept in the key. A cache that fails is logged and bypassed: embedding still works.
"""

from __future__ import annotations

import hashlib
import logging
from typing import TYPE_CHECKING

from application.errors import MemoryUnavailable
from application.ports.embedder import Embedder

if TYPE_CHECKING:
    from collections.abc import Sequence

    from application.ports.memory_store import EmbeddingCache

log = logging.getLogger(__name__)


def embedding_key(model: str, text: str) -> str:
    return hashlib.sha256(f"{model}\x00{text}".encode()).hexdigest()


class CachedEmbedder(Embedder):
    def __init__(self, embedder: Embedder, cache: EmbeddingCache) -> None:
        self._embedder = embedder
        self._cache = cache

    @property
    def name(self) -> str:
        return self._embedder.name

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        unique = list(dict.fromkeys(texts))
        keys = {text: embedding_key(self.name, text) for text in unique}
        found: dict[str, list[float]] = {}
        try:
            cached = await self._cache.cached_vectors([keys[t] for t in unique])
            found = {t: v for t, v in zip(unique, cached, strict=True) if v is not None}
        except MemoryUnavailable as failure:
            log.warning("embedding cache unavailable, embedding without it: %s", failure.message)
        missing = [t for t in unique if t not in found]
        if missing:
            vectors = await self._embedder.embed(missing)
            fresh = dict(zip(missing, vectors, strict=True))
            found.update(fresh)
            try:
                await self._cache.cache_vectors({keys[t]: v for t, v in fresh.items()})
            except MemoryUnavailable as failure:
                log.warning("embedding cache unavailable, vectors not kept: %s", failure.message)
        return [list(found[t]) for t in texts]
