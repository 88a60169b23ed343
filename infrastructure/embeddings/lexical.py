"""The embedded default embedder: hashed bag of words and character trigrams, no model at all.

Deterministic (blake2b, not Python's salted `hash`), dependency-free and fast. Each word (common
English stop words left out) counts 1, each of its character trigrams (`#holiday#` → `#ho`, `hol`,
…) counts 0.25, so that "holiday" still meets "holidays"; every feature is hashed to one of `dim`
slots with a sign, and the vector is L2-normalised, so cosine similarity is a dot product. It
matches words, not meanings: use the OpenAI-compatible embedder for semantic search.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import re
from collections import Counter
from functools import lru_cache
from typing import TYPE_CHECKING

from application.ports.embedder import Embedder

if TYPE_CHECKING:
    from collections.abc import Sequence

_WORD = re.compile(r"\w+", re.UNICODE)
TRIGRAM_WEIGHT = 0.25
_STOP_WORDS_TEXT = (
    "a an and are as at be but by can could did do does for from had has have how i if in into is it its "
    "me my of on or our so than that the their them then there these they this to was we were what when "
    "where which who why will with would you your"
)
STOP_WORDS = frozenset(_STOP_WORDS_TEXT.split())
# Up to this many characters are embedded on the event loop (well under a millisecond); more, such
# as a 32 KiB query of new words, in a worker thread, so the loop never waits for it.
INLINE_CHARS = 4096


def _slot(feature: str, dim: int) -> tuple[int, float]:
    """The feature's slot and sign."""
    digest = int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "little")
    return (digest >> 1) % dim, -1.0 if digest & 1 else 1.0


# About 1 KB an entry: 8,192 words hold about 8 MiB (65,536 held 61 MiB) and keep the frequent ones.
@lru_cache(maxsize=1 << 13)
def _word_features(word: str, dim: int) -> tuple[tuple[int, float], ...]:
    """What one occurrence of `word` adds: (slot, signed weight) pairs."""
    slot, sign = _slot(word, dim)
    added: dict[int, float] = {slot: sign}
    if len(word) > 2:
        marked = f"#{word}#"
        for start in range(len(marked) - 2):
            slot, sign = _slot("3:" + marked[start : start + 3], dim)
            added[slot] = added.get(slot, 0.0) + sign * TRIGRAM_WEIGHT
    return tuple(added.items())


class LexicalEmbedder(Embedder):
    def __init__(self, dim: int = 512) -> None:
        if dim < 16:
            raise ValueError("a lexical embedding needs at least 16 dimensions")
        self._dim = dim

    @property
    def name(self) -> str:
        return f"lexical-{self._dim}"

    @property
    def dim(self) -> int:
        return self._dim

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if sum(len(text) for text in texts) <= INLINE_CHARS:
            return self.vectors(texts)
        return await asyncio.to_thread(self.vectors, list(texts))

    def vectors(self, texts: Sequence[str]) -> list[list[float]]:
        return [self.vector(text) for text in texts]

    def vector(self, text: str) -> list[float]:
        dim = self._dim
        vector = [0.0] * dim
        for word, count in Counter(_WORD.findall(text.lower())).items():
            if word in STOP_WORDS:
                continue
            for slot, weight in _word_features(word, dim):
                vector[slot] += weight * count
        norm = math.hypot(*vector)  # in C: summed in Python, the squares took 40% of a vector's time
        return [v / norm for v in vector] if norm else vector
