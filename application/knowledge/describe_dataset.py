"""Describe a dataset: its record and how many documents and chunks it holds."""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.errors import NotFound
from application.knowledge.documents import DatasetSummary

if TYPE_CHECKING:
    from application.ports.dataset_inventory import DatasetInventory
    from application.ports.knowledge_base import KnowledgeBase
    from domain.ids import OwnerId


class DescribeDataset:
    def __init__(self, knowledge: KnowledgeBase, inventory: DatasetInventory) -> None:
        self._knowledge = knowledge
        self._inventory = inventory

    async def __call__(self, owner: OwnerId, dataset_id: str) -> DatasetSummary:
        dataset = await self._knowledge.get_dataset(dataset_id, owner)
        if dataset is None:
            raise NotFound(f"Dataset {dataset_id!r} was not found.")
        counts = await self._inventory.counts(dataset_id)
        return DatasetSummary(dataset, counts.documents, counts.chunks)
