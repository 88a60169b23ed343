"""Workflows and versions in dicts, with the WorkflowStore port's rules (names, compare-and-set,
owners); the contract suite runs it beside the SQL adapter."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from application.errors import Conflict
from application.ports.workflow_store import WorkflowStore

if TYPE_CHECKING:
    from domain.ids import OwnerId
    from domain.workflows.workflow import Workflow, WorkflowId, WorkflowVersion


class FakeWorkflowStore(WorkflowStore):
    def __init__(self) -> None:
        self.workflows: dict[WorkflowId, Workflow] = {}
        self.published: dict[tuple[WorkflowId, int], WorkflowVersion] = {}

    async def create(self, workflow: Workflow) -> None:
        if any(w.owner == workflow.owner and w.name == workflow.name and not w.archived
               for w in self.workflows.values()):
            raise Conflict(f"You have a workflow named {workflow.name!r} already.")
        self.workflows[workflow.id] = workflow

    async def get(self, workflow_id: WorkflowId, owner: OwnerId) -> Workflow | None:
        found = self.workflows.get(workflow_id)
        return found if found is not None and found.owner == owner else None

    async def list_owned(self, owner: OwnerId) -> list[Workflow]:
        mine = [w for w in self.workflows.values() if w.owner == owner]
        return sorted(mine, key=lambda w: (w.created_at, w.id), reverse=True)

    async def save(self, workflow: Workflow, expected_revision: int) -> bool:
        current = await self.get(workflow.id, workflow.owner)
        if current is None or current.archived or current.revision != expected_revision:
            return False
        self.workflows[workflow.id] = replace(current, graph=workflow.graph, revision=workflow.revision,
                                              archived=workflow.archived, updated_at=workflow.updated_at)
        return True

    async def publish(self, workflow: Workflow, version: WorkflowVersion) -> bool:
        current = await self.get(workflow.id, workflow.owner)
        if current is None or current.archived or current.latest_version != version.number - 1:
            return False
        self.published[(workflow.id, version.number)] = version
        self.workflows[workflow.id] = replace(current, latest_version=version.number, updated_at=workflow.updated_at)
        return True

    async def version(self, workflow_id: WorkflowId, owner: OwnerId, number: int) -> WorkflowVersion | None:
        return self.published.get((workflow_id, number)) if await self.get(workflow_id, owner) else None

    async def versions(self, workflow_id: WorkflowId, owner: OwnerId) -> list[WorkflowVersion]:
        if await self.get(workflow_id, owner) is None:
            return []
        return sorted((v for (w, _), v in self.published.items() if w == workflow_id), key=lambda v: -v.number)
