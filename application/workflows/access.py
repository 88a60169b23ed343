"""Who may see and change a workflow: its owner; anyone else is told it does not exist."""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.errors import NotFound

if TYPE_CHECKING:
    from application.ports.workflow_store import WorkflowStore
    from domain.ids import OwnerId
    from domain.workflows.workflow import Workflow, WorkflowId


async def own_workflow(store: WorkflowStore, workflow_id: WorkflowId, owner: OwnerId) -> Workflow:
    workflow = await store.get(workflow_id, owner)
    if workflow is None:
        raise NotFound(f"Workflow {workflow_id!r} was not found.")
    return workflow
