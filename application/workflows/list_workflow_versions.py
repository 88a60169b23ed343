"""A workflow's published versions, newest first."""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.workflows.access import own_workflow

if TYPE_CHECKING:
    from application.ports.workflow_store import WorkflowStore
    from domain.ids import OwnerId
    from domain.workflows.workflow import WorkflowId, WorkflowVersion


class ListWorkflowVersions:
    def __init__(self, store: WorkflowStore) -> None:
        self._store = store

    async def __call__(self, workflow_id: WorkflowId, owner: OwnerId) -> list[WorkflowVersion]:
        await own_workflow(self._store, workflow_id, owner)  # an unknown workflow is 404, not an empty list
        return await self._store.versions(workflow_id, owner)
