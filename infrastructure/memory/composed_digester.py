"""A `MemoryDigester` made of a summariser and an entity extractor: one summary update, then one
extraction per exchange.

With the offline models (extractive summaries, rule-based entities) that is the offline digester;
with the LLM ones it is the upkeep of two model calls and more (the cost `LLMMemoryDigester` cuts),
kept to measure against.
"""

from __future__ import annotations

from application.ports.memory_models import Digest, DigestRequest, EntityExtractor, MemoryDigester, Summarizer


class ComposedDigester(MemoryDigester):
    def __init__(self, summarizer: Summarizer, extractor: EntityExtractor) -> None:
        self._summarizer = summarizer
        self._extractor = extractor

    async def digest(self, request: DigestRequest) -> Digest:
        summary = None
        if request.limit is not None:
            summary = await self._summarizer.update(request.summary, request.exchanges, request.limit)
        if not request.entities:
            return Digest(summary)
        return Digest(summary, tuple([await self._extractor.extract(e) for e in request.exchanges]))
