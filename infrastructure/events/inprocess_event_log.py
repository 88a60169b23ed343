from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

from application.ports.event_log import EventLog, LoggedEvent
from domain.ids import TaskId
from domain.thoughts import AgentThought


@dataclass(slots=True)
class _TaskLog:
    events: list[LoggedEvent] = field(default_factory=list)
    changed: asyncio.Condition = field(default_factory=asyncio.Condition)
    expiry: asyncio.TimerHandle | None = None


class InProcessEventLog(EventLog):
    """Event logs in memory, woken by a Condition: for one server process."""

    def __init__(self) -> None:
        self._logs: dict[TaskId, _TaskLog] = {}

    async def open(self, task_id: TaskId) -> None:
        """Every follower of this log is in this process already."""

    async def append(self, task_id: TaskId, thought: AgentThought) -> int:
        return await self.append_many(task_id, [thought])

    async def append_many(self, task_id: TaskId, thoughts: Sequence[AgentThought]) -> int:
        log = self._logs.setdefault(task_id, _TaskLog())
        for thought in thoughts:
            log.events.append(LoggedEvent(len(log.events) + 1, thought))
        async with log.changed:
            log.changed.notify_all()
        return len(log.events)

    async def read(self, task_id: TaskId, after: int, wait: float) -> list[LoggedEvent]:
        log = self._logs.setdefault(task_id, _TaskLog())
        if len(log.events) <= after and wait > 0:
            async with log.changed:
                try:
                    await asyncio.wait_for(log.changed.wait_for(lambda: len(log.events) > after), wait)
                except TimeoutError:
                    return []
        return log.events[after:]

    async def close(self, task_id: TaskId, retention: float) -> None:
        log = self._logs.get(task_id)
        if log is None:
            return
        if log.expiry is not None:
            log.expiry.cancel()
        log.expiry = asyncio.get_running_loop().call_later(retention, self._logs.pop, task_id, None)
