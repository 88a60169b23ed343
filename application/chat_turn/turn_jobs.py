"""RunTurnJob: one background job of a finished turn, run by a job worker (`memagent worker`,
docs/ARCHITECTURE.md §10) from the record alone: the message, read again, and the config it ran.

Each kind is idempotent, since a job lost with its worker runs again: the upkeep's digest starts
from its cursor and a fold is a compare-and-set; an automatic title is only set while there is
none; follow-up questions already made are kept. A message gone meanwhile (its conversation
deleted, or pruned) leaves nothing to do. A failing model raises, so the queue retries the job.
A job of another kind (an ingestion, which JobRoutes gives to IngestDocument) is refused unread.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from application.errors import InvalidInput, NotFound
from application.ports.jobs import JobHandler
from application.ports.tracing import NO_TRACER, SpanName, Tracer
from domain.jobs import JobKind

if TYPE_CHECKING:
    from application.conversations.name_conversation import NameConversation
    from application.conversations.suggest_follow_ups import SuggestFollowUps
    from application.memory.run_upkeep import MemoryUpkeep
    from application.ports.message_configs import MessageConfigs
    from application.ports.message_reader import MessageReader
    from domain.agents.config import AgentConfig
    from domain.conversations.conversation import Message
    from domain.jobs import Job

log = logging.getLogger(__name__)
_SPANS = {JobKind.TITLE: SpanName.UPKEEP_TITLE, JobKind.FOLLOW_UPS: SpanName.UPKEEP_FOLLOW_UPS}
_TURN_KINDS = frozenset({JobKind.UPKEEP, *_SPANS})  # an ingestion is IngestDocument's (application/background_jobs.py)


class RunTurnJob(JobHandler):
    def __init__(
        self,
        store: MessageReader,
        configs: MessageConfigs,
        upkeep: MemoryUpkeep,
        name: NameConversation,
        suggest: SuggestFollowUps,
        tracer: Tracer = NO_TRACER,
    ) -> None:
        self._store = store
        self._configs = configs
        self._upkeep = upkeep
        self._name = name
        self._suggest = suggest
        self._tracer = tracer

    async def __call__(self, job: Job, last_try: bool = False) -> None:
        if job.kind not in _TURN_KINDS:  # a misrouted job: its subject is no message, so nothing is read
            raise InvalidInput(f"Job {job.key}: a turn's job is its upkeep, its title or its follow-up questions, "
                               f"not {job.kind.value!r}.")
        message = await self._store.get_message(job.message_id, job.owner)
        if message is None or not message.is_completed_turn:
            log.info("job %s: message %s is gone or not a completed turn, nothing to do", job.key, job.message_id)
            return
        try:
            config = await self._configs.config_ran(message)
        except NotFound as gone:
            log.info("job %s: %s", job.key, gone.message)
            return
        if job.kind is JobKind.UPKEEP:
            await self._upkeep.run_for(config, message, job.turns)  # its own spans, per part
            return
        with self._tracer.span(_SPANS[job.kind], conversation_id=job.conversation_id, message_id=job.message_id):
            await self._made(job.kind, message, config)

    async def _made(self, kind: JobKind, message: Message, config: AgentConfig) -> None:
        if kind is JobKind.TITLE:
            await self._name(message, config)
        elif message.follow_ups is None and config.suggested_questions_after_answer:
            await self._suggest.after_turn(message, config)
