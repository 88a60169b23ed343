"""QueuedAfterTurn: `AfterTurn` with the title and the follow-up questions made by job workers
(docs/ARCHITECTURE.md §10), so the API process spends no model call or CPU on them.

The terminal event still waits for the title at most `title_wait` seconds: the worker stores it,
and a title stored by then travels with the event (read back from the conversation); a later one
travels with the next turn's and is in the stored column. A queue that fails costs the turn
nothing: no title yet (the next turn asks again) and no questions (made on demand by GET
/api/messages/{id}/suggested).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.best_effort import best_effort
from application.chat_turn.after_turn import TurnEnd
from domain.jobs import Job, JobKind

if TYPE_CHECKING:
    from application.chat_turn.turn import Turn
    from application.memory.schedule_upkeep import TurnUpkeep
    from application.ports.conversation_reader import ConversationReader
    from application.ports.jobs import JobQueue
    from domain.agents.config import AgentConfig
    from domain.conversations.conversation import Message


class QueuedAfterTurn(TurnEnd):
    def __init__(self, upkeep: TurnUpkeep, jobs: JobQueue, store: ConversationReader, title_wait: float = 0.5) -> None:
        self._upkeep = upkeep
        self._jobs = jobs
        self._store = store
        self._title_wait = title_wait

    async def before_end(self, turn: Turn, finished: Message) -> str:
        await self._upkeep.before_end(turn.config, finished)
        if not finished.is_completed_turn:
            return turn.conversation.title
        if turn.config.suggested_questions_after_answer:
            await self._queued(JobKind.FOLLOW_UPS, finished)
        if not turn.conversation.needs_title:
            return turn.conversation.title
        job = await self._queued(JobKind.TITLE, finished)
        if job is None:
            return ""
        done, _ = await best_effort(self._jobs.wait(job, self._title_wait), False, f"waiting for job {job.key}")
        if not done:
            return ""
        named, _ = await best_effort(self._store.get_conversation(finished.conversation_id, finished.owner), None,
                                     f"reading the title of conversation {finished.conversation_id}")
        return named.title if named is not None else ""

    def after_end(self, config: AgentConfig, finished: Message) -> None:
        self._upkeep.after_end(config, finished)

    async def _queued(self, kind: JobKind, finished: Message) -> Job | None:
        job = Job.after_turn(kind, finished)
        _, failed = await best_effort(self._jobs.enqueue(job), False, f"queueing job {job.key}")
        return job if failed is None else None  # queued now, or by an earlier call: either can be waited for
