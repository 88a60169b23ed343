"""SweepStaleTurns: turns whose worker is gone are ended with `error`, never left running."""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import TYPE_CHECKING

from application.errors import NotFound
from domain.conversation import Message, MessageStatus, TurnOutcome
from domain.ids import ThoughtId
from domain.messages import Usage
from domain.thoughts import AgentThought, ThoughtEvent

if TYPE_CHECKING:
    from application.ports.event_log import EventLog
    from application.ports.message_store import MessageStore
    from application.ports.runtime import Clock, IdGenerator, TaskSpawner
    from application.ports.task_presence import TaskPresence

log = logging.getLogger(__name__)

WORKER_GONE = "The server process running this turn stopped before the turn ended."


class SweepStaleTurns:
    def __init__(
        self,
        store: MessageStore,
        presence: TaskPresence,
        spawner: TaskSpawner,
        events: EventLog,
        clock: Clock,
        ids: IdGenerator,
        worker_lease: float,
        retention: float,
    ) -> None:
        self._store = store
        self._presence = presence
        self._spawner = spawner
        self._events = events
        self._clock = clock
        self._ids = ids
        self._worker_lease = worker_lease
        self._retention = retention

    async def __call__(self, batch: int = 100) -> int:
        """End the running turns older than one worker lease whose worker holds no lease."""
        now = self._clock.now()
        candidates = await self._store.running_messages(now - timedelta(seconds=self._worker_lease), batch)
        swept = 0
        for message in candidates:
            if await self._is_alive(message) or not await self._end(message):
                continue
            swept += 1
        if swept:
            log.warning("marked %d turn(s) whose worker is gone as error", swept)
        return swept

    async def _is_alive(self, message: Message) -> bool:
        # This process's own turns are alive by definition, even when an overloaded event loop
        # has let their lease lapse; only another process's silence can mean it died.
        return self._spawner.is_running(message.task_id) or await self._presence.worker_alive(message.task_id)

    async def _end(self, message: Message) -> bool:
        now = self._clock.now()
        latency = max(0.0, (now - message.created_at).total_seconds())
        outcome = TurnOutcome("", MessageStatus.ERROR, Usage(), latency, error=WORKER_GONE)
        try:
            await self._store.finish_message(message.finish(outcome, now), [])
        except NotFound:
            return False  # its worker finished it after all
        # Followers of the turn get its end, whichever process they are attached to.
        thought = AgentThought(
            id=ThoughtId(self._ids.new_id()), task_id=message.task_id,
            conversation_id=message.conversation_id, message_id=message.id,
            event=ThoughtEvent.ERROR, observation=WORKER_GONE, latency=round(latency, 6),
        )
        await self._events.append(message.task_id, thought)
        await self._events.close(message.task_id, self._retention)
        return True
