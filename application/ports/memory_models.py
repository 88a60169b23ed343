"""What the memory upkeep asks of a model: summaries and entities.

Adapters: LLM ones over the ChatModel port, and offline ones (extractive summaries, a
rule-based entity extractor) for the offline scripted model. All raise `ModelError` when
the model fails.

`MemoryDigester` is what an upkeep asks after turns: the rolling summary and the turns' entities
at once (one model call with an LLM, docs/ARCHITECTURE.md §3 step 7). `EntityExtractor` still
serves the inline extraction of one turn, `Summarizer.condense` the archive fold.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from domain.memory.summary import SummaryLimit
from domain.memory.window import Exchange


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
        `domain.memory.entity_extraction.read_extraction`."""
        ...


@dataclass(frozen=True, slots=True)
class DigestRequest:
    """What one upkeep sends: the old summary, what the conversation's prompt knows so far (type,
    value: its entities, then the user's facts) and the new exchanges, oldest first; `limit` None
    asks for no summary, `entities` False for none."""

    summary: str
    known: tuple[tuple[str, str], ...]
    exchanges: tuple[Exchange, ...]
    limit: SummaryLimit | None
    entities: bool


@dataclass(frozen=True, slots=True)
class Digest:
    """What came back: the new rolling summary (None when not asked for) and, when entities were
    asked for, one raw extraction per exchange in the request's order (untrusted, as
    `EntityExtractor.extract` returns it)."""

    summary: str | None
    extractions: tuple[object, ...] = ()


class MemoryDigester(Protocol):
    async def digest(self, request: DigestRequest) -> Digest:
        """The summary updated with the new exchanges and the entities each of them states."""
        ...
