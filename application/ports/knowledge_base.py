from collections.abc import Sequence
from typing import Protocol

from domain.ids import OwnerId
from domain.knowledge.datasets import Chunk, Dataset, ScoredChunk


class KnowledgeBase(Protocol):
    """Datasets, their chunks and the chunks' vectors. Raises `StoreUnavailable` on failure."""

    async def add_dataset(self, dataset: Dataset) -> None: ...

    async def get_dataset(self, dataset_id: str, owner: OwnerId) -> Dataset | None: ...

    async def list_datasets(self, owner: OwnerId, offset: int, limit: int) -> list[Dataset]:
        """`owner`'s datasets, newest first (ties: by id), skipping `offset` and at most `limit`."""
        ...

    async def add_chunks(self, chunks: Sequence[Chunk], vectors: Sequence[Sequence[float]]) -> None:
        """Store a document's chunks with their vectors, in one transaction."""
        ...

    async def search(
        self, owner: OwnerId, dataset_ids: Sequence[str], vector: Sequence[float], top_k: int, min_score: float
    ) -> list[ScoredChunk]:
        """The `top_k` chunks of `owner`'s datasets most similar to `vector`, best first."""
        ...
