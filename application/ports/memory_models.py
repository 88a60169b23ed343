"""What the memory upkeep asks of a model: summaries and entities.

Adapters: LLM ones over the ChatModel port, and offline ones (extractive summaries, a
rule-based entity extractor) for the offline scripted model. Both raise `ModelError` when
the model fails.
"""

from collections.abc import Sequence
from typing import Protocol

from domain.memory import Exchange
from domain.memory_summary import SummaryLimit


class Summarizer(Protocol):
    async def update(self, summary: str, exchanges: Sequence[Exchange], limit: SummaryLimit) -> str:
        """The rolling summary: the old one plus the new exchanges, keeping facts, decisions, user
        preferences and unfinished tasks, dropping small talk, within `limit`."""
        ...

    async def condense(self, exchanges: Sequence[Exchange], limit: SummaryLimit) -> str:
        """An archive entry's summary of a batch of old exchanges, within `limit`."""
        ...


class EntityExtractor(Protocol):
    async def extract(self, exchange: Exchange) -> object:
        """The raw `{"intent": str, "entities": [{"type", "value", "confidence"}]}` found in one
        exchange (a mapping, or JSON text). It is untrusted: the caller validates it with
        `domain.entity_extraction.read_extraction`."""
        ...
