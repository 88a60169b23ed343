from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

from application.ports.client_tool_exchange import ClientToolExchange, PausedTurn

if TYPE_CHECKING:
    from collections.abc import Callable

    from domain.ids import OwnerId, TaskId
    from domain.tools.client_tools import Resumption


class InProcessClientToolExchange(ClientToolExchange):
    """Paused turns in memory, for one server process; they lapse like their Redis twin's.

    `clock` is the monotonic clock the expiries are read on (a test passes its own).
    """

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._calls: dict[tuple[OwnerId, str], dict[TaskId, tuple[PausedTurn, float]]] = {}
        self._claims: dict[tuple[TaskId, str], float] = {}
        self._results: dict[tuple[TaskId, str], asyncio.Queue[Resumption]] = {}
        self._clock = clock

    async def pause(self, paused: PausedTurn, ttl: float) -> None:
        until = self._clock() + ttl
        self._claims[_pause(paused)] = until
        for call_id in paused.call_ids:
            self._calls.setdefault((paused.task.owner, call_id), {})[paused.task.task_id] = (paused, until)

    async def find(self, owner: OwnerId, call_id: str) -> tuple[PausedTurn, ...]:
        waiting = self._calls.get((owner, call_id), {})
        now = self._clock()
        for task_id in [task_id for task_id, (_, until) in waiting.items() if until < now]:
            del waiting[task_id]
        return tuple(paused for paused, _ in waiting.values())

    async def deliver(self, paused: PausedTurn, resumption: Resumption) -> bool:
        until = self._claims.pop(_pause(paused), None)
        if until is None or until < self._clock():
            return False
        self._queue(_pause(paused)).put_nowait(resumption)
        return True

    async def collect(self, paused: PausedTurn, wait: float) -> Resumption | None:
        try:
            return await asyncio.wait_for(self._queue(_pause(paused)).get(), wait)
        except TimeoutError:
            return None

    async def end(self, paused: PausedTurn) -> None:
        for call_id in paused.call_ids:
            waiting = self._calls.get((paused.task.owner, call_id), {})
            waiting.pop(paused.task.task_id, None)
            if not waiting:
                self._calls.pop((paused.task.owner, call_id), None)
        self._claims.pop(_pause(paused), None)
        self._results.pop(_pause(paused), None)

    def _queue(self, pause: tuple[TaskId, str]) -> asyncio.Queue[Resumption]:
        return self._results.setdefault(pause, asyncio.Queue())


def _pause(paused: PausedTurn) -> tuple[TaskId, str]:
    return paused.task.task_id, paused.key
