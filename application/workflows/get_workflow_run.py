"""One workflow run's record, with its nodes in the order they ran: its owner's, and its end user's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.errors import NotFound

if TYPE_CHECKING:
    from application.ports.workflow_runs import RecordedRun, WorkflowRunStore
    from domain.ids import EndUserId, OwnerId


class GetWorkflowRun:
    def __init__(self, runs: WorkflowRunStore) -> None:
        self._runs = runs

    async def __call__(self, run_id: str, owner: OwnerId, end_user: EndUserId | None) -> RecordedRun:
        """`end_user` None: any of the account's; another owner's or end user's run is `NotFound`."""
        recorded = await self._runs.get(run_id, owner, end_user)
        if recorded is None:
            raise NotFound(f"Workflow run {run_id!r} was not found.")
        return recorded
