"""One of the caller's workflows, with its draft."""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.workflows.access import own_workflow

if TYPE_CHECKING:
    from application.ports.workflow_store import WorkflowStore
    from domain.ids import OwnerId
    from domain.workflows.workflow import Workflow, WorkflowId


class GetWorkflow:
    def __init__(self, store: WorkflowStore) -> None:
        self._store = store

    async def __call__(self, workflow_id: WorkflowId, owner: OwnerId) -> Workflow:
        return await own_workflow(self._store, workflow_id, owner)
