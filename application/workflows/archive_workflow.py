"""Archive a workflow: it and its versions stay readable, it no longer changes, and its name is free again."""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.errors import Conflict
from application.workflows.access import own_workflow
from domain.workflows.workflow import WorkflowConflict

if TYPE_CHECKING:
    from application.ports.runtime import Clock
    from application.ports.workflow_store import WorkflowStore
    from domain.ids import OwnerId
    from domain.workflows.workflow import Workflow, WorkflowId


class ArchiveWorkflow:
    def __init__(self, store: WorkflowStore, clock: Clock) -> None:
        self._store = store
        self._clock = clock

    async def __call__(self, workflow_id: WorkflowId, owner: OwnerId) -> Workflow:
        workflow = await own_workflow(self._store, workflow_id, owner)
        try:
            archived = workflow.archived_at(self._clock.now())
        except WorkflowConflict as refused:
            raise Conflict(str(refused)) from refused
        if not await self._store.save(archived, expected_revision=workflow.revision):
            raise Conflict("The workflow changed while it was being archived; read it again.")
        return archived
