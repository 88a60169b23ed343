"""What follows a saved turn besides its answer: memory upkeep, the conversation's title and the
follow-up questions (docs/ARCHITECTURE.md §3 steps 6-7).

The title and the questions are made in the background (`TaskSpawner`), so a slow or failing
model never delays or fails a turn that is already done. The terminal event waits for the title
at most `title_wait` seconds: a title ready by then travels with it, a later one with the next
turn's (and from the stored column). Like the memory upkeep, they run on the agent's own model
profile, never the process's default model (application/ports/profile_work.py).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Protocol

from application.best_effort import best_effort
from application.ports.tracing import NO_TRACER, SpanName, Tracer
from domain.ids import TaskId

if TYPE_CHECKING:
    from collections.abc import Coroutine
    from typing import Any

    from application.chat_turn.turn import Turn
    from application.conversations.name_conversation import NameConversation
    from application.conversations.suggest_follow_ups import SuggestFollowUps
    from application.memory.schedule_upkeep import TurnUpkeep
    from application.ports.runtime import TaskSpawner
    from domain.agents.config import AgentConfig
    from domain.conversations.conversation import Message

log = logging.getLogger(__name__)


class TurnEnd(Protocol):
    """What follows a saved turn: `AfterTurn` in this process, `QueuedAfterTurn` on job workers."""

    async def before_end(self, turn: Turn, finished: Message) -> str:
        """Work done before the terminal event; the conversation's title for it. Never raises."""
        ...

    def after_end(self, config: AgentConfig, finished: Message) -> None:
        """After the terminal event, in the background. Never raises."""
        ...


class AfterTurn(TurnEnd):
    def __init__(
        self,
        upkeep: TurnUpkeep,
        name: NameConversation,
        suggest: SuggestFollowUps,
        spawner: TaskSpawner,
        title_wait: float = 0.5,
        tracer: Tracer = NO_TRACER,
    ) -> None:
        self._upkeep = upkeep
        self._name = name
        self._suggest = suggest
        self._spawner = spawner
        self._title_wait = title_wait
        self._tracer = tracer

    async def before_end(self, turn: Turn, finished: Message) -> str:
        """For a saved turn the input review did not refuse: inline upkeep, then the title and the
        follow-up questions started. The conversation's title for the terminal event ("" while it
        has none). Never raises."""
        await self._upkeep.before_end(turn.config, finished)
        if not finished.is_completed_turn:
            return turn.conversation.title
        if turn.config.suggested_questions_after_answer:
            self._spawn(f"follow-ups-{finished.id}", self._follow_ups(finished, turn.config))
        if not turn.conversation.needs_title:
            return turn.conversation.title  # a later turn: its title costs nothing
        return await self._title(turn, finished)

    def after_end(self, config: AgentConfig, finished: Message) -> None:
        """After the terminal event: memory upkeep, in the background. Never raises."""
        self._upkeep.after_end(config, finished)

    async def _title(self, turn: Turn, finished: Message) -> str:
        ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        if not self._spawn(f"title-{finished.id}", self._named(finished, turn.config, ready)):
            return ""
        try:
            # The shield keeps the job's future whole when the wait ends first.
            return await asyncio.wait_for(asyncio.shield(ready), self._title_wait)
        except TimeoutError:
            return ""

    async def _named(self, finished: Message, config: AgentConfig, ready: asyncio.Future[str]) -> None:
        what = f"the title of conversation {finished.conversation_id}"
        title = None
        try:
            with self._tracer.span(SpanName.UPKEEP_TITLE, conversation_id=finished.conversation_id) as span:
                title, failed = await best_effort(self._name(finished, config), None, what)
                if failed is not None:
                    span.fail(failed)
        finally:  # also when the job is cancelled (a shutdown): the turn's wait ends at once
            if not ready.done():
                ready.set_result(title or "")

    async def _follow_ups(self, finished: Message, config: AgentConfig) -> None:
        with self._tracer.span(SpanName.UPKEEP_FOLLOW_UPS, message_id=finished.id) as span:
            _, failed = await best_effort(self._suggest.after_turn(finished, config), None,
                                          f"the follow-up questions of message {finished.id}")
            if failed is not None:
                span.fail(failed)

    def _spawn(self, name: str, work: Coroutine[Any, Any, None]) -> bool:
        try:
            self._spawner.spawn(TaskId(name), work)
        except Exception:  # scheduling must not fail a turn that is already done
            work.close()
            log.exception("could not start %s", name)
            return False
        return True
