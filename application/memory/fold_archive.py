"""Archive compaction: the oldest turns of the short-term store folded into archive entries (a
memory upkeep job).

It runs whenever the short-term store is over its threshold, so a failed fold is retried next
time. Folding is a compare-and-set on the memory store, so two workers never archive a turn
twice nor skip one. The entries are written by the agent's memory model (`AgentConfig.upkeep_model`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from domain.memory.archive import ArchiveEntry, due_for_archive
from domain.memory.window import MemoryPolicy, exchanges_of

if TYPE_CHECKING:
    from application.memory.short_term_memory import ShortTermMemory
    from application.ports.memory_models import Summarizer
    from application.ports.memory_store import MemoryStore
    from application.ports.profile_work import OnProfile
    from application.ports.runtime import Clock
    from domain.agents.config import AgentConfig
    from domain.ids import ConversationId

log = logging.getLogger(__name__)

MAX_FOLDS_PER_RUN = 5  # batches one upkeep folds at most (a rebuilt store may be over by several)


class FoldArchive:
    def __init__(
        self,
        short_term: ShortTermMemory,
        memory: MemoryStore,
        summarizer: OnProfile[Summarizer],
        clock: Clock,
        policy: MemoryPolicy,
    ) -> None:
        self._short_term = short_term
        self._memory = memory
        self._summarizer = summarizer
        self._clock = clock
        self._policy = policy

    async def __call__(self, config: AgentConfig, conversation_id: ConversationId) -> list[ArchiveEntry]:
        """Fold the oldest batches while the store is over its threshold; the entries this call added."""
        policy, added = self._policy, list[ArchiveEntry]()
        for _ in range(MAX_FOLDS_PER_RUN):
            stored = await self._short_term.stored(conversation_id, config)
            batch = due_for_archive(stored, policy.compact_threshold, policy.compact_batch)
            if not batch:
                break
            exchanges = exchanges_of(batch)
            # An empty summary (nothing but small talk) still folds the batch: the store must shrink.
            summarizer = self._summarizer(config.upkeep_model)
            text = policy.summary.trim(await summarizer.condense(exchanges, policy.summary))
            sources = tuple(e.message_id for e in exchanges)
            entry = ArchiveEntry(
                ArchiveEntry.id_for(conversation_id, sources), conversation_id, text, sources, self._clock.now()
            )
            if not await self._memory.fold_into_archive(conversation_id, entry):
                log.info("conversation %s: another worker folded these turns first", conversation_id)
                break
            added.append(entry)  # embedded once, by the recall index's upkeep (IndexMemory)
        return added
