"""SweepStaleTurns: turns whose worker is gone are ended, never left running.

A worker is taken for gone when it holds no lease, twice, `confirm_after` seconds apart: a
presence store that lost its records (Redis flushed, or restarted without persistence) holds no
lease of a live worker either, until its next renewal (every third of a lease), so one look is
not enough.

The record is finished from what the turn's event log holds: the answer streamed so far is
kept, and when the log holds the turn's terminal event (its worker ended the turn but could not
save it, say the database was down) that event's status and cause are stored, not a made-up one.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING

from application.errors import ApplicationError, NotFound
from domain.conversations.conversation import Message, MessageStatus, TurnOutcome
from domain.conversations.messages import Usage
from domain.conversations.thoughts import AgentThought, ThoughtEvent, streamed_answer
from domain.ids import ThoughtId

if TYPE_CHECKING:
    from application.ports.event_log import EventLog
    from application.ports.runtime import Clock, IdGenerator, TaskSpawner
    from application.ports.task_presence import TaskPresence
    from application.ports.turn_record import TurnRecord

log = logging.getLogger(__name__)

WORKER_GONE = "The server process running this turn stopped before the turn ended."


@dataclass(frozen=True, slots=True)
class SweepTimes:
    worker_lease: float = 15.0  # a turn younger than this is never swept
    retention: float = 3600.0  # how long a swept turn's events stay replayable
    confirm_after: float = 7.5  # the second look at a worker that held no lease (> a third of a lease)


class SweepStaleTurns:
    def __init__(
        self,
        store: TurnRecord,
        presence: TaskPresence,
        spawner: TaskSpawner,
        events: EventLog,
        clock: Clock,
        ids: IdGenerator,
        times: SweepTimes,
    ) -> None:
        self._store = store
        self._presence = presence
        self._spawner = spawner
        self._events = events
        self._clock = clock
        self._ids = ids
        self._times = times

    async def __call__(self, batch: int = 100) -> int:
        """End the running turns older than one worker lease whose worker holds no lease."""
        now = self._clock.now()
        candidates = await self._store.running_messages(now - timedelta(seconds=self._times.worker_lease), batch)
        silent = [m for m in candidates if not await self._is_alive(m)]
        if not silent:
            return 0
        await asyncio.sleep(self._times.confirm_after)
        swept = 0
        for message in silent:
            if await self._is_alive(message) or not await self._end(message):
                continue
            swept += 1
        if swept:
            log.warning("marked %d turn(s) whose worker is gone as ended", swept)
        return swept

    async def _is_alive(self, message: Message) -> bool:
        # This process's own turns are alive by definition, even when an overloaded event loop
        # has let their lease lapse; only another process's silence can mean it died.
        return self._spawner.is_running(message.task_id) or await self._presence.worker_alive(message.task_id)

    async def _end(self, message: Message) -> bool:
        now = self._clock.now()
        latency = max(0.0, (now - message.created_at).total_seconds())
        logged = await self._logged(message)
        end = next((t for t in reversed(logged) if t.event.is_terminal), None)
        status = MessageStatus.ended_by(end.event) if end is not None else MessageStatus.ERROR
        error = end.observation if end is not None else WORKER_GONE
        outcome = TurnOutcome(streamed_answer(logged), status, Usage(), latency, error=error)
        try:
            await self._store.finish_message(message.finish(outcome, now), [])
        except NotFound:
            return False  # its worker finished it after all
        if end is None:  # followers of the turn get its end, whichever process they are attached to
            thought = AgentThought(
                id=ThoughtId(self._ids.new_id()), task_id=message.task_id,
                conversation_id=message.conversation_id, message_id=message.id,
                event=ThoughtEvent.ERROR, observation=WORKER_GONE, latency=round(latency, 6),
                answer=outcome.answer,  # the partial answer, as the stored message keeps it
            )
            await self._events.append_past_unseen(message.task_id, thought)
        await self._events.close(message.task_id, self._times.retention)
        return True

    async def _logged(self, message: Message) -> list[AgentThought]:
        try:
            return [e.thought for e in await self._events.read(message.task_id, 0, 0)]
        except ApplicationError as failure:  # the record is finished all the same, without the answer
            log.warning("turn %s: its events could not be read: %s", message.task_id, failure.message)
            return []
