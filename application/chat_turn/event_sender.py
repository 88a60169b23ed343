"""Sends a turn's events to its log in order, without making the turn wait for each one.

Events queue and one sender task appends whatever has queued in one call. While an append is
under way, further deltas of the same answer merge into one event (the protocol aggregates
deltas by id anyway), so a turn that streams faster than the log answers sends fewer, larger
events instead of falling behind, and an idle one still sends each delta at once.

A failed append is kept and raised once, at the next `send` or `flush`, so that the turn ends
with an error; later events (the terminal one above all) are still tried.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from application.errors import ApplicationError, EventStoreUnavailable

if TYPE_CHECKING:
    from application.ports.event_log import EventLog
    from domain.ids import TaskId
    from domain.thoughts import AgentThought

log = logging.getLogger(__name__)

MAX_PENDING = 256  # events queued for the log before `send` waits for it


class EventSender:
    def __init__(self, events: EventLog, task_id: TaskId, max_pending: int = MAX_PENDING) -> None:
        self._log = events
        self._task_id = task_id
        self._max_pending = max_pending
        self._pending: list[AgentThought] = []
        self._sending: asyncio.Task[None] | None = None
        self._failure: ApplicationError | None = None

    async def send(self, thought: AgentThought) -> None:
        self.raise_failure()
        if self._pending and self._pending[-1].continued_by(thought):
            self._pending[-1] = self._pending[-1].merged_with(thought)
        else:
            self._pending.append(thought)
        self._start()
        if len(self._pending) >= self._max_pending:
            await self.flush()

    async def flush(self) -> None:
        """Until every event queued so far is in the log; raises a failed append's error, once."""
        while self._failure is None and (self._pending or self._busy()):
            self._start()
            if self._sending is not None:
                await asyncio.shield(self._sending)  # a cancelled turn must not cancel the sending
        self.raise_failure()

    def take_failure(self) -> ApplicationError | None:
        """The failure not raised yet, if any; cleared."""
        failure, self._failure = self._failure, None
        return failure

    def raise_failure(self) -> None:
        failure = self.take_failure()
        if failure is not None:
            raise failure

    def _busy(self) -> bool:
        return self._sending is not None and not self._sending.done()

    def _start(self) -> None:
        if self._pending and not self._busy():
            self._sending = asyncio.ensure_future(self._run())

    async def _run(self) -> None:
        try:
            while self._pending:
                batch, self._pending = self._pending, []
                await self._log.append_many(self._task_id, batch)
        except ApplicationError as failure:
            self._failure = failure
        except Exception:  # a bug here must still end the turn with an error, not lose events quietly
            log.exception("task %s: sending events failed", self._task_id)
            self._failure = EventStoreUnavailable("Sending the turn's events failed.")
