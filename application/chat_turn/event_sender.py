"""Sends a turn's events to its log in order, without making the turn wait for each one.

Each event is queued with the log at once (`EventLog.append_soon`): the log keeps their order,
shares its round trips among every turn's events, and hands them to the followers in this
process right away, so a streamed delta never waits for the one before it to be stored.

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
    from domain.conversations.thoughts import AgentThought
    from domain.ids import TaskId

log = logging.getLogger(__name__)

MAX_UNSTORED = 256  # events queued with the log and not stored yet before `send` waits for them


class EventSender:
    def __init__(self, events: EventLog, task_id: TaskId, max_unstored: int = MAX_UNSTORED) -> None:
        self._log = events
        self._task_id = task_id
        self._max_unstored = max_unstored
        self._unstored: set[asyncio.Future[int]] = set()
        self._failure: ApplicationError | None = None

    async def send(self, thought: AgentThought) -> None:
        self.raise_failure()
        stored = asyncio.ensure_future(self._log.append_soon(self._task_id, [thought]))
        if stored.done():
            self._keep_failure(stored)
        else:
            self._unstored.add(stored)
            stored.add_done_callback(self._settle)
        if len(self._unstored) >= self._max_unstored:
            await self.flush()

    async def flush(self) -> None:
        """Until every event sent so far is stored; raises a failed append's error, once."""
        while self._unstored:
            waiting = set(self._unstored)
            await asyncio.wait(waiting)  # which a cancelled turn leaves running: its events still go out
            for stored in waiting:
                self._settle(stored)
        self.raise_failure()

    def take_failure(self) -> ApplicationError | None:
        """The failure not raised yet, if any; cleared."""
        failure, self._failure = self._failure, None
        return failure

    def raise_failure(self) -> None:
        failure = self.take_failure()
        if failure is not None:
            raise failure

    def _settle(self, stored: asyncio.Future[int]) -> None:
        """Done with an append (called by its callback and by `flush`, whichever comes first)."""
        if stored in self._unstored:
            self._unstored.remove(stored)
            self._keep_failure(stored)

    def _keep_failure(self, stored: asyncio.Future[int]) -> None:
        if stored.cancelled() or (error := stored.exception()) is None:
            return  # cancelled: the loop is shutting down
        if isinstance(error, ApplicationError):
            failure = error
        else:  # a bug here must still end the turn with an error, not lose events quietly
            log.error("task %s: sending events failed", self._task_id, exc_info=error)
            failure = EventStoreUnavailable("Sending the turn's events failed.")
        self._failure = self._failure or failure  # the first one not raised yet
