"""One published version of a workflow: the graph an agent that pins it runs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.errors import NotFound

if TYPE_CHECKING:
    from application.ports.workflow_store import WorkflowStore
    from domain.ids import OwnerId
    from domain.workflows.workflow import WorkflowId, WorkflowVersion


class GetWorkflowVersion:
    def __init__(self, store: WorkflowStore) -> None:
        self._store = store

    async def __call__(self, workflow_id: WorkflowId, owner: OwnerId, number: int) -> WorkflowVersion:
        version = await self._store.version(workflow_id, owner, number)
        if version is None:
            raise NotFound(f"Workflow {workflow_id!r} has no version {number}.")
        return version
