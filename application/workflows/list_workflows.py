"""The caller's workflows, archived ones too, newest first."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from application.ports.workflow_store import WorkflowStore
    from domain.ids import OwnerId
    from domain.workflows.workflow import Workflow


class ListWorkflows:
    def __init__(self, store: WorkflowStore) -> None:
        self._store = store

    async def __call__(self, owner: OwnerId) -> list[Workflow]:
        return await self._store.list_owned(owner)
