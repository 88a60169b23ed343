"""Recall of the long-term and entity tiers (docs/ARCHITECTURE.md §3 step 3).

The short-term window comes from `short_term_memory`. Long-term and entity memory fill the system
prompt in priority order (entities, summary, archive entries by similarity to the query)
within `MemoryPolicy.recall_max_tokens`; the `long_term_memory_recall` event says what was
recalled and why. The archive is ranked by the vectors stored with its entries (`ArchiveIndex`):
a turn embeds its query, and only entries not indexed yet besides.
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
from application.memory.stored_archive import StoredArchive
from application.memory.user_recall import UserRecalled
from domain.agents.prompt import PromptMemory
from domain.memory.archive import RankedEntry, rank_archive
from domain.memory.entities import EntitySheet
from domain.memory.recall import earlier_line, select_recall
from domain.memory.user_facts import facts_for_prompt
from domain.memory.window import MemoryPolicy

if TYPE_CHECKING:
    from collections.abc import Coroutine, Sequence

    from application.memory.user_recall import UserRecall
    from application.ports.archive_index import ArchiveIndex, ArchiveRanking
    from application.ports.embedder import Embedder
    from application.ports.memory_store import EntityMemory, MemoryStore
    from application.ports.runtime import Tokenizer
    from domain.agents.config import AgentConfig
    from domain.conversations.conversation import Conversation
    from domain.conversations.messages import Msg
    from domain.ids import ConversationId

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
    the problem and recall goes on without it (archive entries fall back to the newest). Without
    an `archive` index, the memory store's entries are embedded at every turn (`StoredArchive`).
    `at_once`: the tiers are read concurrently, which a database server rewards (one round trip
    of waiting); an embedded database answers on this process's own threads, where concurrent
    reads only contend with each other, so there they are read one after the other (`UserRecall`
    still reads the user's facts, mostly a cached copy, beside their earlier conversations).
    """

    def __init__(
        self,
        memory: MemoryStore,
        entities: EntityMemory,
        embedder: Embedder,
        tokenizer: Tokenizer,
        policy: MemoryPolicy | None = None,
        user: UserRecall | None = None,
        archive: ArchiveIndex | None = None,
        *,
        at_once: bool = True,
    ) -> None:
        self._archive = archive or StoredArchive(memory)
        self._at_once = at_once
        self._entities = entities
        self._embedder = embedder
        self._tokenizer = tokenizer
        self._policy = policy or MemoryPolicy()
        self._user = user

    async def recall(
        self, conversation: Conversation, config: AgentConfig, query: str, window: list[Msg]
    ) -> Recall:
        policy, problems = self._policy, list[str]()
        (sheet, sheet_problem), (archived, archive_problem), user = await self._read_tiers(conversation, config, query)
        # In a fixed order, whichever read ended first.
        problems.extend(f"{tier}: {why}" for tier, why in (("entities", sheet_problem), ("archive", archive_problem))
                        if why is not None)
        problems.extend(user.problems)
        problems.extend(archived.problems)
        floor = policy.entity_min_confidence
        # `summary_enabled` governs the upkeep; a summary already there (say, from before) is recalled.
        selection = select_recall(
            facts_for_prompt(sheet.for_prompt(floor), user.facts.for_prompt(floor)), conversation.summary,
            archived.ranked,
            policy.recall_max_tokens, self._tokenizer.count, user.earlier,
        )
        memory = PromptMemory(
            summary=selection.summary,
            archive=tuple(r.entry.summary for r in selection.archive),
            entities=selection.entities,
            earlier=tuple(earlier_line(s) for s in selection.earlier),
        )
        found = RecallFound(sheet, selection, archived.entries, archived.ranking, problems, user, self._embedder.name)
        return Recall(memory, recall_report(found, len(window), config, policy))

    async def _recall_user(self, conversation: Conversation, config: AgentConfig, query: str) -> UserRecalled:
        if self._user is None:
            return UserRecalled()
        return await self._user.recall(conversation, config, query)

    async def _read_tiers(
        self, conversation: Conversation, config: AgentConfig, query: str
    ) -> tuple[tuple[EntitySheet, str | None], tuple[ArchivedRecall, str | None], UserRecalled]:
        def sheet() -> Coroutine[Any, Any, tuple[EntitySheet, str | None]]:
            return best_effort(self._sheet(conversation), EntitySheet(), "recall of entities")

        def archive() -> Coroutine[Any, Any, tuple[ArchivedRecall, str | None]]:
            return best_effort(self._ranked(conversation, query), ArchivedRecall(), "recall of the archive")

        if not self._at_once:
            return await sheet(), await archive(), await self._recall_user(conversation, config, query)
        async with asyncio.TaskGroup() as reads:
            sheet_read, archive_read = reads.create_task(sheet()), reads.create_task(archive())
            user_read = reads.create_task(self._recall_user(conversation, config, query))
        return sheet_read.result(), archive_read.result(), user_read.result()

    async def _sheet(self, conversation: Conversation) -> EntitySheet:
        if not conversation.has_earlier_turns:  # its first turn: the upkeep of none has given it entities yet
            return EntitySheet()
        return await self._entities.entity_sheet(conversation.id)

    async def _ranked(self, conversation: Conversation, query: str) -> ArchivedRecall:
        """The best `archive_top_k` entries by cosine: the query embedded, ranked against the stored
        vectors, and entries not indexed yet embedded and scored here."""
        top_k, conversation_id = self._policy.archive_top_k, conversation.id
        if not top_k or not conversation.has_earlier_turns:  # a first turn has no archive to rank
            return ArchivedRecall()
        try:
            [wanted] = await self._embedder.embed([query])
        except (ApplicationError, ValueError) as failure:  # ValueError: DomainError, or vectors of odd shapes
            return await self._newest(conversation_id, failure)
        found = await self._archive.ranked_archive(conversation_id, self._embedder.name, wanted, top_k)
        ranked = list(found.ranked)
        if found.unembedded:
            try:
                vectors = await self._embedder.embed([e.summary for e in found.unembedded])
                ranked = _merged(ranked, rank_archive(found.unembedded, vectors, wanted, top_k), top_k)
            except (ApplicationError, ValueError) as failure:
                return await self._newest(conversation_id, failure)
        return ArchivedRecall(ranked, found.entries, self._ranking(found))

    def _ranking(self, found: ArchiveRanking) -> str:
        if not found.entries:
            return "no archive entries"
        return f"top {self._policy.archive_top_k} by cosine similarity to the query ({self._embedder.name})"

    async def _newest(self, conversation_id: ConversationId, failure: Exception) -> ArchivedRecall:
        reason = failure.message if isinstance(failure, ApplicationError) else str(failure)
        log.warning("archive recall: similarity unavailable, newest entries used: %s", reason)
        found = await self._archive.newest_archive(conversation_id, self._policy.archive_top_k)
        if not found.entries:
            return ArchivedRecall(ranking="no archive entries")
        problem = f"archive: similarity unavailable ({reason}); the newest entries were used"
        return ArchivedRecall(list(found.ranked), found.entries, "newest first (similarity unavailable)", (problem,))


@dataclass(frozen=True, slots=True)
class ArchivedRecall:
    ranked: list[RankedEntry] = field(default_factory=list)
    entries: int = 0
    ranking: str = "no archive entries"
    problems: tuple[str, ...] = ()


def _merged(ranked: Sequence[RankedEntry], more: Sequence[RankedEntry], top_k: int) -> list[RankedEntry]:
    """Two rankings as one: by score, ties to the newer entry, as `rank_archive` orders them."""
    return sorted([*ranked, *more], key=lambda r: (-(r.score or 0.0), -r.entry.created_at.timestamp(),
                                                  r.entry.id))[:top_k]
