"""Recall of the long-term and entity tiers (docs/ARCHITECTURE.md §3 step 3).

The short-term window comes from `short_term_memory`. Long-term and entity memory fill the system
prompt in priority order (entities, summary, archive entries by similarity to the query)
within `MemoryPolicy.recall_max_tokens`; the `long_term_memory_recall` event says what was
recalled and why.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from application.best_effort import best_effort
from application.errors import ApplicationError
from application.memory.recall_report import RecallFound, recall_report
from application.memory.user_recall import UserRecalled
from domain.memory import MemoryPolicy
from domain.memory_archive import ArchiveEntry, RankedEntry, newest_entries, rank_archive
from domain.memory_entities import EntitySheet
from domain.memory_recall import earlier_line, select_recall
from domain.prompt import PromptMemory
from domain.user_memory import facts_for_prompt

if TYPE_CHECKING:
    from application.memory.user_recall import UserRecall
    from application.ports.embedder import Embedder
    from application.ports.memory_store import EntityMemory, MemoryStore
    from application.ports.runtime import Tokenizer
    from domain.agent import AgentConfig
    from domain.conversation import Conversation
    from domain.ids import ConversationId
    from domain.messages import Msg

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Recall:
    memory: PromptMemory
    report: dict[str, Any] = field(default_factory=dict)

    @property
    def observation(self) -> str:
        """The `long_term_memory_recall` event's observation: what was recalled, and why."""
        return json.dumps(self.report, ensure_ascii=False)


class LongTermRecall(Protocol):
    async def recall(
        self, conversation: Conversation, config: AgentConfig, query: str, window: list[Msg]
    ) -> Recall:
        """What long-term and entity memory give the turn's prompt, and the report of why."""
        ...


class SummaryOnlyRecall(LongTermRecall):
    """Without the archive and entity tiers: the rolling summary only."""

    async def recall(
        self, conversation: Conversation, config: AgentConfig, query: str, window: list[Msg]
    ) -> Recall:
        memory = PromptMemory(summary=conversation.summary)
        return Recall(memory, {"short_term_messages": len(window), "summary": memory.summary})


class MemoryRecall(LongTermRecall):
    """The long-term and entity tiers at recall time, and the user's memory (`UserRecall`) when given.

    A memory backend or embedder that fails costs its tier, never the turn: the report names
    the problem and recall goes on without it (archive entries fall back to the newest).
    """

    def __init__(
        self,
        memory: MemoryStore,
        entities: EntityMemory,
        embedder: Embedder,
        tokenizer: Tokenizer,
        policy: MemoryPolicy | None = None,
        user: UserRecall | None = None,
    ) -> None:
        self._memory = memory
        self._entities = entities
        self._embedder = embedder
        self._tokenizer = tokenizer
        self._policy = policy or MemoryPolicy()
        self._user = user

    async def recall(
        self, conversation: Conversation, config: AgentConfig, query: str, window: list[Msg]
    ) -> Recall:
        policy, problems = self._policy, list[str]()
        # Every tier at once: with a memory server and a database, one round trip of waiting.
        async with asyncio.TaskGroup() as reads:
            sheet_read = reads.create_task(
                best_effort(self._entities.entity_sheet(conversation.id), EntitySheet(), "recall of entities")
            )
            archive = best_effort(self._archive(conversation.id), list[ArchiveEntry](), "recall of the archive")
            archive_read = reads.create_task(archive)
            user_read = reads.create_task(self._recall_user(conversation, config, query))
        (sheet, sheet_problem), (stored, archive_problem) = sheet_read.result(), archive_read.result()
        user = user_read.result()
        # In a fixed order, whichever read ended first.
        problems.extend(f"{tier}: {why}" for tier, why in (("entities", sheet_problem), ("archive", archive_problem))
                        if why is not None)
        problems.extend(user.problems)
        entries = [e for e in stored if e.summary.strip()]  # a batch of small talk folds to nothing
        ranked, ranking = await self._rank(entries, query, problems)
        floor = policy.entity_min_confidence
        # `summary_enabled` governs the upkeep; a summary already there (say, from before) is recalled.
        selection = select_recall(
            facts_for_prompt(sheet.for_prompt(floor), user.facts.for_prompt(floor)), conversation.summary, ranked,
            policy.recall_max_tokens, self._tokenizer.count, user.earlier,
        )
        memory = PromptMemory(
            summary=selection.summary,
            archive=tuple(r.entry.summary for r in selection.archive),
            entities=selection.entities,
            earlier=tuple(earlier_line(s) for s in selection.earlier),
        )
        found = RecallFound(sheet, selection, len(entries), ranking, problems, user, self._embedder.name)
        return Recall(memory, recall_report(found, len(window), config, policy))

    async def _recall_user(self, conversation: Conversation, config: AgentConfig, query: str) -> UserRecalled:
        if self._user is None:
            return UserRecalled()
        return await self._user.recall(conversation, config, query)

    async def _archive(self, conversation_id: ConversationId) -> list[ArchiveEntry]:
        return await self._memory.archive(conversation_id) if self._policy.archive_top_k else []

    async def _rank(
        self, entries: list[ArchiveEntry], query: str, problems: list[str]
    ) -> tuple[list[RankedEntry], str]:
        top_k = self._policy.archive_top_k
        if not entries:
            return [], "no archive entries"
        try:
            vectors = await self._embedder.embed([query, *(e.summary for e in entries)])
            ranked = rank_archive(entries, vectors[1:], vectors[0], top_k)
        except (ApplicationError, ValueError) as failure:  # ValueError: DomainError, or vectors of odd shapes
            reason = failure.message if isinstance(failure, ApplicationError) else str(failure)
            log.warning("archive recall: similarity unavailable, newest entries used: %s", reason)
            problems.append(f"archive: similarity unavailable ({reason}); the newest entries were used")
            return newest_entries(entries, top_k), "newest first (similarity unavailable)"
        return ranked, f"top {top_k} by cosine similarity to the query ({self._embedder.name})"
