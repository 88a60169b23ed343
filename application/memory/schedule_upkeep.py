"""When memory upkeep runs: after a turn's terminal event, in the background, batched.

`UpkeepScheduler.after_end` spawns the upkeep once the turn's terminal event is out, so it never
delays `agent_end`. Entity extraction runs there too, unless the policy says inline: then
`before_end` does it before the terminal event, so the next turn surely sees them. Turns of one
conversation that finish while its upkeep waits for the lock join that upkeep, so under load the
summary is updated once for several turns, not once each.

`NoUpkeep` is the scheduler of an agent without upkeep. There is no queue besides the upkeeps
this process scheduled: its lag (`lag`) is the age of the oldest of them not finished yet, waiting
for its conversation's lock or running.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Protocol

from application.memory.run_upkeep import MemoryUpkeep, PendingUpkeep
from domain.ids import ConversationId, TaskId

if TYPE_CHECKING:
    from application.ports.runtime import Clock, TaskSpawner
    from domain.agent import AgentConfig
    from domain.conversation import Message

log = logging.getLogger(__name__)


class TurnUpkeep(Protocol):
    """What a finished turn asks of memory upkeep."""

    async def before_end(self, config: AgentConfig, finished: Message) -> None:
        """Work that must be done before the terminal event. Never raises."""
        ...

    def after_end(self, config: AgentConfig, finished: Message) -> None:
        """Schedule the rest in the background. Never raises."""
        ...


class NoUpkeep(TurnUpkeep):
    async def before_end(self, config: AgentConfig, finished: Message) -> None:
        return None

    def after_end(self, config: AgentConfig, finished: Message) -> None:
        return None


class UpkeepScheduler(TurnUpkeep):
    def __init__(self, upkeep: MemoryUpkeep, spawner: TaskSpawner, clock: Clock) -> None:
        self._upkeep = upkeep
        self._spawner = spawner
        self._clock = clock
        self._scheduled_at: dict[int, float] = {}  # per upkeep not finished (by its id()): when it was scheduled
        self._running = 0
        self._idle: asyncio.Event | None = None
        self._waiting: dict[ConversationId, PendingUpkeep] = {}  # per conversation: the upkeep not locked yet

    async def before_end(self, config: AgentConfig, finished: Message) -> None:
        if self._upkeep.extracts_inline and config.entities_enabled and finished.is_completed_turn:
            await self._upkeep.extract_inline(config, finished)

    def after_end(self, config: AgentConfig, finished: Message) -> None:
        if not finished.is_completed_turn:
            return
        waiting = self._waiting.get(finished.conversation_id)
        if waiting is not None and not waiting.closed:
            waiting.config = config
            waiting.turns.append(finished)
            return
        pending = PendingUpkeep(config, [finished])
        self._waiting[finished.conversation_id] = pending
        self._scheduled_at[id(pending)] = self._clock.monotonic()
        self._started()
        work = self._tracked(pending)
        try:
            self._spawner.spawn(TaskId(f"upkeep-{finished.id}"), work)
        except Exception:  # scheduling must not fail a turn that already ended
            work.close()
            del self._waiting[finished.conversation_id]
            del self._scheduled_at[id(pending)]
            self._ended()
            log.exception("could not schedule memory upkeep of message %s", finished.id)

    def lag(self) -> float:
        """Seconds since the oldest upkeep not finished yet was scheduled; 0 when none is."""
        if not self._scheduled_at:
            return 0.0
        return max(0.0, self._clock.monotonic() - min(self._scheduled_at.values()))

    async def wait_idle(self) -> None:
        """Until no upkeep scheduled by this instance is running (for tests and benchmarks)."""
        while self._running:
            await self._idle_event().wait()

    async def _tracked(self, pending: PendingUpkeep) -> None:
        try:
            await self._upkeep.run_pending(pending)
        finally:
            conversation_id = pending.turns[0].conversation_id
            if self._waiting.get(conversation_id) is pending:
                del self._waiting[conversation_id]
            del self._scheduled_at[id(pending)]
            self._ended()

    def _started(self) -> None:
        self._running += 1
        self._idle_event().clear()

    def _ended(self) -> None:
        self._running -= 1
        if not self._running:
            self._idle_event().set()

    def _idle_event(self) -> asyncio.Event:
        if self._idle is None:
            self._idle = asyncio.Event()
        return self._idle
