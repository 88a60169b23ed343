"""StopRun: the owner asks a running streamed run to stop, and hears how it ended.

The request sets the run's stop flag in the task control, which any worker reads: the one running
the run sees it within `MEMAGENT_TURN__STOP_CHECK_INTERVAL` (its TurnWatch, logged_run.py) and
cancels the run, which records itself `stopped`. As with a turn's stop (application/tasks/stop_task.py)
the run may end on its own in between, so the stop waits (at most `settle` seconds) for the record's
status: `stopped`; another end first is a `Conflict` naming it; still `running` is reported as such.

A blocking run (not streamed) has no task record, so no stop flag reaches it: it is a `Conflict`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.errors import Conflict, NotFound
from application.settle import settled
from application.workflows.logged_run import run_log
from domain.workflows.runs import RunStatus

if TYPE_CHECKING:
    from application.ports.task_control import TaskControl
    from application.ports.workflow_runs import RecordedRun, WorkflowRunStore
    from domain.ids import EndUserId, OwnerId


class StopRun:
    def __init__(self, runs: WorkflowRunStore, tasks: TaskControl, settle: float = 5.0) -> None:
        self._runs = runs
        self._tasks = tasks
        self._settle = settle

    async def __call__(self, run_id: str, owner: OwnerId, end_user: EndUserId | None) -> RunStatus:
        """`STOPPED` once the run stopped, or `RUNNING` when it had not ended within `settle` seconds.
        Another owner's or end user's run is `NotFound`; a run that ended before is a `Conflict`."""
        recorded = await self._runs.get(run_id, owner, end_user)
        if recorded is None:
            raise NotFound(f"Workflow run {run_id!r} was not found.")
        if recorded.run.status is not RunStatus.RUNNING:
            raise Conflict(f"Workflow run {run_id!r} has already ended with status {recorded.run.status.value!r}.")
        if not await self._tasks.request_stop(run_log(run_id), owner):
            raise Conflict(f"Workflow run {run_id!r} cannot be stopped: only a streamed run can be.")
        status = await self._final_status(run_id, owner)
        if status not in (RunStatus.STOPPED, RunStatus.RUNNING):
            raise Conflict(f"Workflow run {run_id!r} ended with status {status.value!r} before the stop took effect.")
        return status

    async def _final_status(self, run_id: str, owner: OwnerId) -> RunStatus:
        def ended(found: RecordedRun | None) -> bool:
            return found is None or found.run.status is not RunStatus.RUNNING

        recorded = await settled(lambda: self._runs.get(run_id, owner), ended, self._settle)
        return RunStatus.RUNNING if recorded is None else recorded.run.status
