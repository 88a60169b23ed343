"""The event log of turns, its appends timed: a decorator of the EventLog port."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

from application.ports.event_log import EventLog, LoggedEvent

if TYPE_CHECKING:
    from collections.abc import Awaitable, Sequence

    from application.ports.store_metrics import StoreMetrics
    from domain.conversations.thoughts import AgentThought
    from domain.ids import TaskId


class MeteredEventLog(EventLog):
    """Each append (one round trip where there is a server) is observed, failed ones too: a slow
    failure is exactly what the histogram is for. One queued with `append_soon` is observed when
    it is stored."""

    def __init__(self, log: EventLog, metrics: StoreMetrics) -> None:
        self._log = log
        self._metrics = metrics

    async def open(self, task_id: TaskId) -> None:
        await self._log.open(task_id)

    async def append(self, task_id: TaskId, thought: AgentThought) -> int:
        started = time.perf_counter()
        try:
            return await self._log.append(task_id, thought)
        finally:
            self._metrics.event_appended(time.perf_counter() - started)

    async def append_past_unseen(self, task_id: TaskId, thought: AgentThought) -> int:
        started = time.perf_counter()
        try:
            return await self._log.append_past_unseen(task_id, thought)
        finally:
            self._metrics.event_appended(time.perf_counter() - started)

    async def append_many(self, task_id: TaskId, thoughts: Sequence[AgentThought]) -> int:
        started = time.perf_counter()
        try:
            return await self._log.append_many(task_id, thoughts)
        finally:
            self._metrics.event_appended(time.perf_counter() - started)

    def append_soon(self, task_id: TaskId, thoughts: Sequence[AgentThought]) -> Awaitable[int]:
        started = time.perf_counter()
        stored = asyncio.ensure_future(self._log.append_soon(task_id, thoughts))
        stored.add_done_callback(lambda _: self._metrics.event_appended(time.perf_counter() - started))
        return stored

    async def read(self, task_id: TaskId, after: int, wait: float) -> list[LoggedEvent]:
        return await self._log.read(task_id, after, wait)

    async def close(self, task_id: TaskId, retention: float) -> None:
        await self._log.close(task_id, retention)
