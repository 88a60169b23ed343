"""Where workflows, their drafts and their published versions are kept (the database).

Every method is scoped by the owner: another account's workflow is not there (None, [] or False).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from domain.ids import OwnerId
    from domain.workflows.workflow import Workflow, WorkflowId, WorkflowVersion


class WorkflowStore(Protocol):
    """Every method raises `StoreUnavailable` when the database fails."""

    async def create(self, workflow: Workflow) -> None:
        """Store a new workflow; `Conflict` if the owner has another one of that name that is not archived."""
        ...

    async def get(self, workflow_id: WorkflowId, owner: OwnerId) -> Workflow | None: ...

    async def list_owned(self, owner: OwnerId) -> list[Workflow]:
        """The owner's workflows, archived ones too, newest first."""
        ...

    async def save(self, workflow: Workflow, expected_revision: int) -> bool:
        """Store the workflow's draft, revision and archived flag if the stored one is still at
        `expected_revision` and not archived, atomically; False (nothing written) otherwise."""
        ...

    async def publish(self, workflow: Workflow, version: WorkflowVersion) -> bool:
        """Store `version` and the workflow pointing at it in one transaction, if the stored
        workflow's latest version is still `version.number - 1` and it is not archived; False
        (nothing written) otherwise: versions are numbered without gaps or twins."""
        ...

    async def version(self, workflow_id: WorkflowId, owner: OwnerId, number: int) -> WorkflowVersion | None: ...

    async def versions(self, workflow_id: WorkflowId, owner: OwnerId) -> list[WorkflowVersion]:
        """Newest first."""
        ...
