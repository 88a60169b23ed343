"""Create a dataset (a knowledge base) for its owner."""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.errors import InvalidInput
from domain.errors import DomainError
from domain.knowledge.datasets import Dataset

if TYPE_CHECKING:
    from application.ports.knowledge_base import KnowledgeBase
    from application.ports.runtime import Clock, IdGenerator
    from domain.ids import OwnerId


class CreateDataset:
    def __init__(self, knowledge: KnowledgeBase, clock: Clock, ids: IdGenerator) -> None:
        self._knowledge = knowledge
        self._clock = clock
        self._ids = ids

    async def __call__(self, owner: OwnerId, name: str) -> Dataset:
        try:
            dataset = Dataset(id=self._ids.new_id(), owner=owner, name=name.strip(), created_at=self._clock.now())
        except DomainError as broken:
            raise InvalidInput(str(broken)) from broken
        await self._knowledge.add_dataset(dataset)
        return dataset
