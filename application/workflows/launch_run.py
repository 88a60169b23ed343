"""LaunchRun: a streamed run, started as a task of its own (application/workflows/logged_run.py).

Its task record (owner, end user) goes to the task control first, so that a stop finds it from any
worker; then its event log is opened, so that a follower in this process waits for its events
without asking a server; then the run is spawned, and outlives the request that started it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from application.ports.task_control import TaskInfo
from application.workflows.logged_run import run_log
from domain.ids import ConversationId, MessageId

if TYPE_CHECKING:
    from application.ports.event_log import EventLog
    from application.ports.runtime import IdGenerator, TaskSpawner
    from application.ports.task_control import TaskControl
    from application.workflows.logged_run import LoggedRun
    from application.workflows.run_workflow import RunRequest
    from domain.ids import TaskId


class LaunchRun:
    def __init__(
        self, logged: LoggedRun, tasks: TaskControl, events: EventLog, spawner: TaskSpawner, ids: IdGenerator,
        task_ttl: float,
    ) -> None:
        self._logged = logged
        self._tasks = tasks
        self._events = events
        self._spawner = spawner
        self._ids = ids
        self._task_ttl = task_ttl  # as long as TurnWatch keeps the record it writes again

    async def __call__(self, request: RunRequest) -> TaskId:
        """The run's log, to follow. Raises the task control's failure, before anything runs."""
        run_id = self._ids.new_id()
        key = run_log(run_id)
        # A run is no turn: the task control's record of it names no conversation and no message.
        info = TaskInfo(key, request.owner, ConversationId(""), MessageId(""), request.end_user)
        await self._tasks.register(info, self._task_ttl)
        await self._events.open(key)
        self._spawner.spawn(key, self._logged(replace(request, run_id=run_id), info))
        return key
