from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class DatasetCounts:
    documents: int = 0
    chunks: int = 0


class DatasetInventory(Protocol):
    """What a dataset holds. Raises `StoreUnavailable` on failure."""

    async def counts(self, dataset_id: str) -> DatasetCounts: ...
