"""Launching an opened turn: its task record (owner, ids), its event log, and its background run."""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.ports.task_control import TaskInfo

if TYPE_CHECKING:
    from application.chat_turn.run_chat_turn import RunChatTurn
    from application.chat_turn.turn import Turn
    from application.ports.event_log import EventLog
    from application.ports.runtime import TaskSpawner
    from application.ports.task_control import TaskControl


class LaunchTurn:
    def __init__(
        self, tasks: TaskControl, events: EventLog, run_turn: RunChatTurn, spawner: TaskSpawner, task_ttl: float
    ) -> None:
        self._tasks = tasks
        self._events = events
        self._run_turn = run_turn
        self._spawner = spawner
        self._task_ttl = task_ttl

    async def __call__(self, turn: Turn) -> None:
        """Raises the task control's failure, before anything runs."""
        message = turn.message
        await self._tasks.register(
            TaskInfo.of(message), self._task_ttl
        )
        # Before the spawn, so that a follower here never asks the log's server for the first events.
        await self._events.open(message.task_id)
        self._spawner.spawn(message.task_id, self._run_turn(turn))
