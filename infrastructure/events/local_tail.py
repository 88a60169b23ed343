"""The events a process appends to the tasks it runs, kept in memory for followers in that process.

The Redis event log is the record, readable by every process. But the follower of a turn is
usually in the process that runs it (the client streams from the worker it posted to), and a
blocking XREAD per event costs a round trip and a parse each time. So the appender also keeps
its own tasks' events here, and `read` serves them without Redis.

Only the tasks this process starts are kept, each opened before its first event, so that every
id from 1 is here and its first follower waits here too rather than in a blocking XREAD. Their
events are handed to the followers here as the log is asked to store them (`deliver`), before
Redis has answered, with the ids the log gives them; the log drops the tail when Redis does not
confirm them. A task someone else started (a sweep ending another worker's turn) is never kept,
and a closed task is dropped a few seconds later: later readers go to Redis.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from infrastructure.events.events_in_memory import EventsInMemory

if TYPE_CHECKING:
    from collections.abc import Sequence

    from application.ports.event_log import LoggedEvent
    from domain.conversations.thoughts import AgentThought
    from domain.ids import TaskId


class LocalTail:
    """`max_len`: a tail longer than this is dropped, as the stream is trimmed to about that length."""

    def __init__(self, max_len: int) -> None:
        self._max_len = max_len
        self._tails: dict[TaskId, EventsInMemory] = {}

    def open(self, task_id: TaskId) -> None:
        """This process will append the task's events from id 1."""
        self._tails.setdefault(task_id, EventsInMemory())

    def deliver(self, task_id: TaskId, thoughts: Sequence[AgentThought]) -> int | None:
        """Events the log is about to store, given to the followers here at once with the ids that
        follow the tail's: the last one's id, or None when this process does not hold the task's tail."""
        tail = self._tails.get(task_id)
        if tail is None:
            return None
        if len(tail.events) + len(thoughts) > self._max_len:  # the stream is trimmed past this length
            self.forget(task_id)
            return None
        return tail.add(thoughts)

    async def read(self, task_id: TaskId, after: int, wait: float) -> list[LoggedEvent] | None:
        """Events with id > `after`, waiting up to `wait` s; None when this process does not hold
        the task's tail (any more), so the caller must read the record."""
        tail = self._tails.get(task_id)
        if tail is None:
            return None
        if len(tail.events) <= after and wait > 0:
            try:
                async with asyncio.timeout(wait):
                    await tail.grew.wait()
            except TimeoutError:
                pass
            if self._tails.get(task_id) is not tail:  # dropped meanwhile: the record has the rest
                return None
        return tail.events[max(after, 0) :]

    def forget(self, task_id: TaskId) -> None:
        tail = self._tails.pop(task_id, None)
        if tail is not None:
            tail.wake()
