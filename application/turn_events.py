"""Publishes a turn's events to its event log and records its steps.

Publishing does not wait for the log: events queue in order and one sender task per turn
appends whatever has queued in one call. While an append is under way, further deltas of the
same answer merge into one event (the protocol aggregates deltas by id anyway), so a turn
that streams faster than the log answers sends fewer, larger events instead of falling
behind, and an idle one still sends each delta at once. `flush` waits for the log.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from application.errors import ApplicationError
from application.ports.event_log import EventLog
from application.ports.runtime import Clock, IdGenerator
from application.turn import Turn
from domain.conversation import MessageAgentThought
from domain.ids import ThoughtId
from domain.messages import Usage
from domain.thoughts import AgentThought, ThoughtEvent

MAX_PENDING = 256  # events queued for the log before publish waits for it


class TurnEvents:
    """One per running turn: stamps every event with the turn's ids and latency."""

    def __init__(self, turn: Turn, log: EventLog, clock: Clock, ids: IdGenerator) -> None:
        self._turn = turn
        self._log = log
        self._clock = clock
        self._ids = ids
        self._started = clock.monotonic()
        self.steps: list[MessageAgentThought] = []
        self._pending: list[AgentThought] = []
        self._sender: asyncio.Task[None] | None = None
        self._failure: ApplicationError | None = None

    def new_id(self) -> ThoughtId:
        return ThoughtId(self._ids.new_id())

    def now(self) -> datetime:
        return self._clock.now()

    @property
    def elapsed(self) -> float:
        return max(0.0, self._clock.monotonic() - self._started)

    async def publish(
        self,
        event: ThoughtEvent,
        thought_id: ThoughtId | None = None,
        *,
        usage: Usage | None = None,
        **fields: Any,
    ) -> AgentThought:
        usage = usage or Usage()
        thought = AgentThought(
            id=thought_id or self.new_id(),
            task_id=self._turn.message.task_id,
            conversation_id=self._turn.conversation.id,
            message_id=self._turn.message.id,
            event=event,
            message_token_count=usage.prompt_tokens,
            answer_token_count=usage.completion_tokens,
            total_token_count=usage.total_tokens,
            total_price=usage.price,
            latency=round(self.elapsed, 6),
            **fields,
        )
        self._raise_failure()
        self._queue(thought)
        if len(self._pending) >= MAX_PENDING:
            await self.flush()
        return thought

    async def flush(self) -> None:
        """Until every event published so far is in the log; raises the log's failure, once."""
        while self._sender is not None:
            await asyncio.shield(self._sender)  # a cancelled turn must not cancel the sending
        self._raise_failure()

    def _queue(self, thought: AgentThought) -> None:
        if self._pending and self._pending[-1].continued_by(thought):
            self._pending[-1] = self._pending[-1].merged_with(thought)
        else:
            self._pending.append(thought)
        if self._sender is None:
            self._sender = asyncio.ensure_future(self._send())

    async def _send(self) -> None:
        try:
            while self._pending:
                batch, self._pending = self._pending, []
                await self._log.append_many(self._turn.message.task_id, batch)
        except ApplicationError as failure:
            self._failure = failure
        finally:
            self._sender = None

    def _raise_failure(self) -> None:
        failure, self._failure = self._failure, None
        if failure is not None:
            raise failure

    def record_step(
        self,
        thought_id: ThoughtId,
        event: ThoughtEvent,
        *,
        usage: Usage | None = None,
        latency: float = 0.0,
        tool_input: Mapping[str, Any] | None = None,
        **fields: str,
    ) -> MessageAgentThought:
        step = MessageAgentThought(
            id=thought_id,
            message_id=self._turn.message.id,
            position=len(self.steps),
            event=event.value,
            created_at=self._clock.now(),
            usage=usage or Usage(),
            latency=round(latency, 6),
            tool_input=dict(tool_input or {}),
            **fields,
        )
        self.steps.append(step)
        return step
