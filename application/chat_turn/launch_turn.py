"""Launching an opened turn: its task record (owner, ids), its event log, and its background run."""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.ports.task_control import TaskInfo
from application.ports.tracing import NO_TRACER, Tracer

if TYPE_CHECKING:
    from application.chat_turn.run_chat_turn import RunChatTurn
    from application.chat_turn.turn import Turn
    from application.ports.event_log import EventLog
    from application.ports.runtime import TaskSpawner
    from application.ports.task_control import TaskControl


class LaunchTurn:
    def __init__(
        self, tasks: TaskControl, events: EventLog, run_turn: RunChatTurn, spawner: TaskSpawner, task_ttl: float,
        tracer: Tracer = NO_TRACER,
    ) -> None:
        self._tasks = tasks
        self._events = events
        self._run_turn = run_turn
        self._spawner = spawner
        self._task_ttl = task_ttl
        self._tracer = tracer

    async def __call__(self, turn: Turn) -> None:
        """Raises the task control's failure, before anything runs."""
        message = turn.message
        await self._tasks.register(
            TaskInfo.of(message), self._task_ttl
        )
        # Before the spawn, so that a follower here never asks the log's server for the first events.
        await self._events.open(message.task_id)
        # The request's trace (its `traceparent`), handed over as a value: the turn's span is its
        # child whatever the spawner does with context variables.
        run = self._run_turn(turn, self._tracer.current())
        self._spawner.spawn(message.task_id, turn.admission.hold(run))  # its rate-limit slots renewed while it runs
