"""A streamed run as a task of its own, writing its events to a log that every follower reads: the
stream that started it, a client resuming with `Last-Event-ID`, on any worker. So the run outlives
its connection, as a chat turn does (docs/ARCHITECTURE.md §4).

The run's key in the event log, the task control and the presence leases is its id (`run_log`).
The log holds the run's events mapped as a turn maps the events of a workflow it calls
(application/chat_turn/turn_workflows.py): the event's kind as the thought's, its body in
`workflow`. One terminal event ends the log: `agent_end` once the run ended, however it did (its
`workflow_finished` says how), or `error` when it failed with no end of its own (its record could
not be written, an internal error), with the failure's code and message.

Beside the run, a `TurnWatch` renews its lease and task record and stops it when its owner asks
(StopRun, from any worker: the stop flag is the task control's) or when no client has followed it
for `MEMAGENT_WORKFLOWS__CLIENT_GRACE`; the run is then recorded `stopped`.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from application.best_effort import best_effort
from application.chat_turn.turn_watch import StopRequested
from application.errors import ApplicationError
from domain.conversations.thoughts import AgentThought, ThoughtEvent
from domain.ids import ConversationId, MessageId, TaskId, ThoughtId

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from application.chat_turn.turn_watch import TurnWatch
    from application.ports.event_log import EventLog
    from application.ports.task_control import TaskInfo
    from application.workflows.run_workflow import RunRequest, RunWorkflow
    from domain.workflows.events import WorkflowEvent

log = logging.getLogger(__name__)

INTERNAL_ERROR = "The run failed on an internal error."
_NONE = ConversationId(""), MessageId("")  # a run belongs to no conversation


def run_log(run_id: str) -> TaskId:
    """The key of a streamed run's event log, task record, stop flag and leases."""
    return TaskId(run_id)


def run_thought(key: TaskId, event: WorkflowEvent) -> AgentThought:
    return AgentThought(ThoughtId(key), key, *_NONE, ThoughtEvent(event.kind.value), workflow=event.to_dict())


def end_thought(key: TaskId, failure: ApplicationError | None = None) -> AgentThought:
    if failure is None:
        return AgentThought(ThoughtId(key), key, *_NONE, ThoughtEvent.AGENT_END)
    return AgentThought(ThoughtId(key), key, *_NONE, ThoughtEvent.ERROR, observation=failure.message,
                        error_code=failure.code)


class LoggedRun:
    def __init__(
        self, run: RunWorkflow, events: EventLog, new_watch: Callable[..., TurnWatch], retention: float
    ) -> None:
        self._run = run
        self._events = events
        self._new_watch = new_watch  # TurnWatch with its times bound, called with the run's `info`
        self._retention = retention  # seconds the log stays replayable once the run ended

    async def __call__(self, request: RunRequest, info: TaskInfo) -> None:
        """Runs `request` under the task `info` (LaunchRun registered it) to its end; never raises:
        the log says how it ended."""
        key = info.task_id
        appends: list[Awaitable[int]] = []

        def logged(event: WorkflowEvent) -> None:
            # Queued at once, in the order the run reports them: append_soon keeps that order.
            appends.append(self._events.append_soon(key, [run_thought(key, event)]))

        appends.append(self._events.append_soon(key, [await self._ended(request, info, logged)]))
        failures = [f for f in await asyncio.gather(*appends, return_exceptions=True) if isinstance(f, BaseException)]
        if failures:
            log.error("workflow run %s: %d of its events may not be in its log: %r", key, len(failures), failures[0])
        await best_effort(self._events.close(key, self._retention), None, f"keeping workflow run {key} for replay")

    async def _ended(
        self, request: RunRequest, info: TaskInfo, logged: Callable[[WorkflowEvent], None]
    ) -> AgentThought:
        async def work() -> None:
            await self._run(request, logged)

        try:
            await self._new_watch(info=info).run(work())
        # Stopped (by its owner, for want of a client, or by the server's shutdown): the run recorded
        # itself `stopped` and its `workflow_finished` said so; the log only needs its end.
        except (StopRequested, asyncio.CancelledError):
            pass
        except ApplicationError as failure:
            return end_thought(info.task_id, failure)
        except Exception:  # the log must end, whatever went wrong
            log.exception("workflow run %s failed", info.task_id)
            return end_thought(info.task_id, ApplicationError(INTERNAL_ERROR))
        return end_thought(info.task_id)
