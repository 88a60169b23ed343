"""Publishes a turn's events to its event log (through an `EventSender`) and records its steps."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from application.chat_turn.event_sender import EventSender
from application.ports.task_control import TaskControl, TaskInfo
from domain.conversations.conversation import MessageAgentThought
from domain.conversations.messages import Usage
from domain.conversations.thoughts import AgentThought, ThoughtEvent
from domain.ids import ThoughtId

if TYPE_CHECKING:
    from collections.abc import Mapping
    from datetime import datetime

    from application.chat_turn.turn import Turn
    from application.errors import ApplicationError
    from application.ports.event_log import EventLog
    from application.ports.runtime import Clock, IdGenerator


class TurnEvents:
    """One per running turn: stamps every event with the turn's ids and latency."""

    def __init__(self, turn: Turn, log: EventLog, tasks: TaskControl, clock: Clock, ids: IdGenerator) -> None:
        self._turn = turn
        self._log = log
        self._tasks = tasks
        self._clock = clock
        self._ids = ids
        self._started = clock.monotonic()
        self.steps: list[MessageAgentThought] = []
        self._sender = EventSender(log, turn.message.task_id)

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
            tokens_estimated=usage.estimated,
            latency=round(self.elapsed, 6),
            **fields,
        )
        await self._sender.send(thought)
        return thought

    async def flush(self) -> None:
        """Until every event published so far is in the log; raises the log's failure, once."""
        await self._sender.flush()

    async def close(self, retention: float) -> None:
        """Keep the finished turn replayable by its owner for as long as its events are kept."""
        message = self._turn.message
        await self._log.close(message.task_id, retention)
        info = TaskInfo.of(message)
        await self._tasks.register(info, retention)

    def take_failure(self) -> ApplicationError | None:
        """A failure of the log not raised yet (the turn was cancelled meanwhile), cleared."""
        return self._sender.take_failure()

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
