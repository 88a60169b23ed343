"""FollowRun: replay a streamed run's events after a given id, then follow it live until its end.

Who may follow is the run's record's to say (its owner, and under it its end user), as for reading
the run. Following itself is a task's (FollowTask, with the run's own client grace): the same
keep-alives, client leases (the run is stopped once none is renewed for the grace period), and end.
A run that has no event log to follow (it was not streamed, or its log's retention has passed) is
not found.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.errors import NotFound
from application.workflows.logged_run import run_log

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator, Sequence

    from application.ports.event_log import EventLog, LoggedEvent
    from application.ports.task_control import TaskControl
    from application.ports.workflow_runs import WorkflowRunStore
    from application.tasks.follow_task import FollowTask
    from domain.ids import EndUserId, OwnerId, TaskId


class FollowRun:
    def __init__(self, runs: WorkflowRunStore, tasks: TaskControl, events: EventLog, follow: FollowTask) -> None:
        self._runs = runs
        self._tasks = tasks
        self._events = events
        self._follow = follow

    async def owned(self, run_id: str, owner: OwnerId, end_user: EndUserId | None) -> TaskId:
        """The run's log, if the run is the owner's (and `end_user`'s, unless None) and has one."""
        if await self._runs.get(run_id, owner, end_user) is None:
            raise NotFound(f"Workflow run {run_id!r} was not found.")
        key = run_log(run_id)
        # The task record lives while the run does, the log for its retention after: either will do.
        if await self._tasks.get(key) is None and not await self._events.read(key, 0, 0):
            raise NotFound(f"Workflow run {run_id!r} has no events to follow: it did not stream, "
                           "or its events are no longer kept.")
        return key

    async def has_ended(self, key: TaskId, after: int) -> bool:
        """Whether a client that has seen up to `after` has seen the end (FollowTask.has_ended)."""
        return await self._follow.has_ended(key, after)

    def batches(self, key: TaskId, after: int = 0) -> AsyncGenerator[Sequence[LoggedEvent] | None]:
        """The log's events after `after`, read together, up to its end; None on a silence
        (FollowTask.batches). Check ownership with `owned` first, unless the caller launched it."""
        return self._follow.batches(key, after)
