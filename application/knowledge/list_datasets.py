"""ListDatasets: a page of the owner's datasets, newest first, each with how much it holds."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from application.errors import InvalidInput
from application.knowledge.documents import DatasetSummary

if TYPE_CHECKING:
    from application.ports.dataset_inventory import DatasetInventory
    from application.ports.knowledge_base import KnowledgeBase
    from domain.ids import OwnerId

MAX_PAGE = 100
MAX_OFFSET = 2**62  # every database takes it as a 64-bit integer


@dataclass(frozen=True, slots=True)
class DatasetPage:
    summaries: list[DatasetSummary]
    has_more: bool


class ListDatasets:
    def __init__(self, knowledge: KnowledgeBase, inventory: DatasetInventory) -> None:
        self._knowledge = knowledge
        self._inventory = inventory

    async def __call__(self, owner: OwnerId, offset: int = 0, limit: int = 20) -> DatasetPage:
        if not 0 <= offset <= MAX_OFFSET or not 1 <= limit <= MAX_PAGE:
            raise InvalidInput(f"offset must be within 0..{MAX_OFFSET} and limit within 1..{MAX_PAGE}.")
        # One more than the page: whether another page follows is then known, not guessed.
        datasets = await self._knowledge.list_datasets(owner, offset, limit + 1)
        summaries = []
        for dataset in datasets[:limit]:
            counts = await self._inventory.counts(dataset.id)
            summaries.append(DatasetSummary(dataset, counts.documents, counts.chunks))
        return DatasetPage(summaries, len(datasets) > limit)
