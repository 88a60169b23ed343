"""Publish a workflow's draft as its next version: immutable, numbered, with a note and its tool's parameters."""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.errors import Conflict
from application.workflows.access import own_workflow
from domain.workflows.inputs import input_schema
from domain.workflows.workflow import WorkflowConflict

if TYPE_CHECKING:
    from application.ports.runtime import Clock
    from application.ports.workflow_store import WorkflowStore
    from application.workflows.graph_check import GraphCheck
    from domain.ids import OwnerId
    from domain.workflows.workflow import WorkflowId, WorkflowVersion


class PublishWorkflow:
    def __init__(self, store: WorkflowStore, check: GraphCheck, clock: Clock) -> None:
        self._store = store
        self._check = check
        self._clock = clock

    async def __call__(self, workflow_id: WorkflowId, owner: OwnerId, note: str = "") -> WorkflowVersion:
        """The new version. The draft is checked again, with what it refers to: an invalid one is
        refused with every problem; one unchanged since the last version is a conflict."""
        workflow = await own_workflow(self._store, workflow_id, owner)
        graph = await self._check.publishable(workflow.graph, owner)
        last = await self._store.version(workflow_id, owner, workflow.latest_version)  # None before the first
        try:
            published, version = workflow.published(note, input_schema(graph.start), last, self._clock.now())
        except WorkflowConflict as refused:
            raise Conflict(str(refused)) from refused
        if not await self._store.publish(published, version):
            raise Conflict("Another version was published meanwhile, or the workflow was archived; read it again.")
        return version
