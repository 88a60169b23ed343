"""When memory upkeep runs: after a turn's terminal event, in the background, batched, lazily.

`UpkeepScheduler.after_end` never delays `agent_end`. A finished turn waits in its conversation's
batch until `UpkeepRule` says the batch is due (by count or tokens, see upkeep_rule), then the
batch's upkeep is spawned; a batch that is not due is upkept once the conversation has been idle
`idle_seconds` (a delayed run, which a newer turn of the conversation supersedes: it merges into the
same batch and starts its own delay). Entity extraction runs in the upkeep too, unless the policy
says inline: then `before_end` does it before the terminal event, so the next turn surely sees them.
Turns of one conversation that finish while its upkeep waits for the lock join that upkeep, so under
load the summary is updated once for several turns, not once each. `flush` upkeeps every batch now.

`NoUpkeep` is the scheduler of an agent without upkeep. There is no queue besides the upkeeps
this process scheduled: its lag (`lag`) is the age of the oldest of them not finished yet, waiting
for its conversation's lock or running (turns waiting for their batch to be due are not lag: the
window carries them).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from application.memory.run_upkeep import PendingUpkeep
from application.memory.upkeep_rule import EVERY_TURN, UpkeepRule
from domain.ids import ConversationId, TaskId

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Coroutine

    from application.ports.runtime import Clock, TaskSpawner
    from domain.agents.config import AgentConfig
    from domain.conversations.conversation import Message

log = logging.getLogger(__name__)


class TurnUpkeep(Protocol):
    """What a finished turn asks of memory upkeep."""

    async def before_end(self, config: AgentConfig, finished: Message) -> None:
        """Work that must be done before the terminal event. Never raises."""
        ...

    def after_end(self, config: AgentConfig, finished: Message) -> None:
        """Schedule the rest in the background. Never raises."""
        ...


class UpkeepRunner(Protocol):
    """Who runs a due batch: `MemoryUpkeep` in this process, or `QueuedUpkeep` on a job worker."""

    @property
    def extracts_inline(self) -> bool: ...

    async def extract_inline(self, config: AgentConfig, finished: Message) -> None: ...

    async def run_pending(self, pending: PendingUpkeep) -> None:
        """Never raises (but lets cancellation through)."""
        ...


class NoUpkeep(TurnUpkeep):
    async def before_end(self, config: AgentConfig, finished: Message) -> None:
        return None

    def after_end(self, config: AgentConfig, finished: Message) -> None:
        return None


@dataclass(slots=True)
class _Batch:
    """Finished turns of one conversation not handed to an upkeep yet."""

    config: AgentConfig
    turns: list[Message]
    tokens: int


def _words(text: str) -> int:
    return len(text.split())


class UpkeepScheduler(TurnUpkeep):
    def __init__(
        self,
        upkeep: UpkeepRunner,
        spawner: TaskSpawner,
        clock: Clock,
        rule: UpkeepRule = EVERY_TURN,
        count: Callable[[str], int] = _words,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        """`count`: a text's tokens (the tokenizer's); `sleep`: waits that many seconds (the idle delay)."""
        self._upkeep = upkeep
        self._spawner = spawner
        self._clock = clock
        self._rule = rule
        self._count = count
        self._sleep = sleep
        self._batches: dict[ConversationId, _Batch] = {}  # per conversation: the turns no upkeep holds yet
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
        conversation_id = finished.conversation_id
        waiting = self._waiting.get(conversation_id)
        if waiting is not None and not waiting.closed:
            waiting.config = config
            waiting.turns.append(finished)
            return
        batch = self._batches.setdefault(conversation_id, _Batch(config, [], 0))
        batch.config = config
        batch.turns.append(finished)
        if self._rule.waits:  # counted only when a turn may wait: tokens cost a tokenizer pass
            batch.tokens += self._count(finished.query) + self._count(finished.answer)
        if not self._rule.waits or self._rule.due(len(batch.turns), batch.tokens, config):
            self._launch(conversation_id)
        elif self._rule.idle_seconds:
            self._spawn(TaskId(f"upkeep-idle-{finished.id}"), self._after_idle(batch, len(batch.turns)), finished)

    async def flush(self) -> None:
        """Upkeep every waiting batch now, and wait for every upkeep of this instance to end."""
        for conversation_id in list(self._batches):
            self._launch(conversation_id)
        await self.wait_idle()

    async def _after_idle(self, batch: _Batch, size: int) -> None:
        """The delayed run: the batch, unless a newer turn joined it (its own delay goes on) or it left."""
        await self._sleep(self._rule.idle_seconds)
        conversation_id = batch.turns[0].conversation_id
        if self._batches.get(conversation_id) is batch and len(batch.turns) == size:
            self._launch(conversation_id)

    def _launch(self, conversation_id: ConversationId) -> None:
        """Spawn the upkeep of the conversation's batch."""
        batch = self._batches.pop(conversation_id)
        pending = PendingUpkeep(batch.config, batch.turns)
        self._waiting[conversation_id] = pending
        self._scheduled_at[id(pending)] = self._clock.monotonic()
        self._started()
        if not self._spawn(TaskId(f"upkeep-{batch.turns[-1].id}"), self._tracked(pending), batch.turns[-1]):
            del self._waiting[conversation_id]
            del self._scheduled_at[id(pending)]
            self._ended()

    def _spawn(self, task_id: TaskId, work: Coroutine[Any, Any, None], finished: Message) -> bool:
        try:
            self._spawner.spawn(task_id, work)
        except Exception:  # scheduling must not fail a turn that already ended
            work.close()
            log.exception("could not schedule memory upkeep of message %s", finished.id)
            return False
        return True

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
