"""Save a workflow's draft over the revision its editor read: a newer one is a conflict, never overwritten."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from application.errors import Conflict
from application.workflows.access import own_workflow
from domain.workflows.workflow import WorkflowConflict

if TYPE_CHECKING:
    from application.ports.runtime import Clock
    from application.ports.workflow_store import WorkflowStore
    from application.workflows.graph_check import GraphCheck
    from domain.ids import OwnerId
    from domain.workflows.workflow import Workflow, WorkflowId


class SaveWorkflowDraft:
    def __init__(self, store: WorkflowStore, check: GraphCheck, clock: Clock) -> None:
        self._store = store
        self._check = check
        self._clock = clock

    async def __call__(self, workflow_id: WorkflowId, owner: OwnerId, revision: int, graph: Any) -> Workflow:
        """The workflow with its new draft (revision + 1); an invalid graph is refused with every problem."""
        workflow = await own_workflow(self._store, workflow_id, owner)
        self._check.parsed(graph)
        try:
            saved = workflow.saved_draft(revision, graph, self._clock.now())
        except WorkflowConflict as refused:
            raise Conflict(str(refused)) from refused
        if not await self._store.save(saved, expected_revision=revision):
            raise Conflict(f"The draft changed while it was being saved over revision {revision}; read it again.")
        return saved
