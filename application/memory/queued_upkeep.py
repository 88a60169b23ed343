"""QueuedUpkeep: a due batch of finished turns handed to a job worker instead of run here, so the
API process spends its CPU on turns and streams (docs/ARCHITECTURE.md §10).

The job names the batch's newest turn and its size; the worker reads them from the record and
runs `MemoryUpkeep.run_for`, whose digest cursor and fold compare-and-set make a run repeated
after a lost worker change nothing. Inline entity extraction stays here: the turn's terminal
event waits for it.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from application.best_effort import best_effort
from domain.jobs import Job, JobKind

if TYPE_CHECKING:
    from application.memory.run_upkeep import MemoryUpkeep, PendingUpkeep
    from application.ports.jobs import JobQueue
    from domain.agents.config import AgentConfig
    from domain.conversations.conversation import Message

log = logging.getLogger(__name__)


class QueuedUpkeep:
    def __init__(self, upkeep: MemoryUpkeep, jobs: JobQueue) -> None:
        self._upkeep = upkeep
        self._jobs = jobs

    @property
    def extracts_inline(self) -> bool:
        return self._upkeep.extracts_inline

    async def extract_inline(self, config: AgentConfig, finished: Message) -> None:
        await self._upkeep.extract_inline(config, finished)

    async def run_pending(self, pending: PendingUpkeep) -> None:
        """Queue the batch's upkeep. Never raises: a batch the queue missed is caught up by the
        next one, whose digest starts from the cursor."""
        pending.closed = True  # the job is queued as it is: a later turn gets a job of its own
        newest = pending.turns[-1]
        job = Job.after_turn(JobKind.UPKEEP, newest, len(pending.turns))
        await best_effort(self._jobs.enqueue(job), False, f"queueing the memory upkeep of {newest.conversation_id}")
