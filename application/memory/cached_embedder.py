"""An Embedder with a cache in front: the same text with the same model is embedded once.

Keys are a SHA-256 of the model name and the text, so vectors of different models never mix
and no text is kept in the key. A cache that fails is logged and bypassed: embedding still works.

Lookups of a text already on its way share that one request (single flight): a turn's archive
recall and its cross-conversation recall embed the query at the same moment, and both would miss
the cache. The shared request runs as a task of its own, so a caller that is cancelled (a stopped
turn) does not cancel it for the others; its failure reaches every caller waiting on it and is
not kept: the next lookup asks again.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from typing import TYPE_CHECKING

from application.errors import MemoryUnavailable
from application.ports.embedder import Embedder

if TYPE_CHECKING:
    from collections.abc import Sequence

    from application.ports.memory_store import EmbeddingCache

log = logging.getLogger(__name__)

Vectors = dict[str, list[float]]  # by key


def embedding_key(model: str, text: str) -> str:
    return hashlib.sha256(f"{model}\x00{text}".encode()).hexdigest()


class CachedEmbedder(Embedder):
    def __init__(self, embedder: Embedder, cache: EmbeddingCache) -> None:
        self._embedder = embedder
        self._cache = cache
        self._flights: dict[str, asyncio.Task[Vectors]] = {}  # key → the lookup that brings its vector

    @property
    def name(self) -> str:
        return self._embedder.name

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        keys = {text: embedding_key(self.name, text) for text in texts}
        mine = {key: text for text, key in keys.items() if key not in self._flights}
        if mine:
            flight = asyncio.get_running_loop().create_task(self._look_up(mine), name="embedding lookup")
            flight.add_done_callback(_retrieved)
            self._flights.update(dict.fromkeys(mine, flight))
        flights = {self._flights[key] for key in keys.values()}  # taken now: a flight leaves once it lands
        found: Vectors = {}
        for flight in flights:
            found.update(await asyncio.shield(flight))
        return [list(found[keys[text]]) for text in texts]

    async def _look_up(self, wanted: dict[str, str]) -> Vectors:
        """The vectors of `wanted` (key → text): the cache's, and the embedder's for the rest."""
        try:
            return await self._cached_or_embedded(wanted)
        finally:  # landed (or failed): later lookups read the cache, or ask again
            for key in wanted:
                self._flights.pop(key, None)

    async def _cached_or_embedded(self, wanted: dict[str, str]) -> Vectors:
        found: Vectors = {}
        try:
            cached = await self._cache.cached_vectors(list(wanted))
            found = {key: vector for key, vector in zip(wanted, cached, strict=True) if vector is not None}
        except MemoryUnavailable as failure:
            log.warning("embedding cache unavailable, embedding without it: %s", failure.message)
        missing = [key for key in wanted if key not in found]
        if missing:
            fresh = dict(zip(missing, await self._embedder.embed([wanted[key] for key in missing]), strict=True))
            found.update(fresh)
            try:
                await self._cache.cache_vectors(fresh)
            except MemoryUnavailable as failure:
                log.warning("embedding cache unavailable, vectors not kept: %s", failure.message)
        return found


def _retrieved(flight: asyncio.Task[Vectors]) -> None:
    """Marks a flight's failure as seen: its callers may all have been cancelled before it ended."""
    if not flight.cancelled():
        flight.exception()
