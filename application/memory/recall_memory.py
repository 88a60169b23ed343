"""Recall (§3 step 3): the short-term window, then entities, the rolling summary and the archive.

The short-term store holds every completed turn not archived yet; the prompt gets its last
`dialog_round` turns within the token budget. Long-term and entity memory fill the system
prompt in priority order (entities, summary, archive entries by similarity to the query)
within `MemoryPolicy.recall_max_tokens`; the `long_term_memory_recall` event says what was
recalled and why.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from application.errors import ApplicationError
from application.ports.embedder import Embedder
from application.ports.memory_store import EntityMemory, MemoryStore
from application.ports.message_store import MessageStore
from application.ports.runtime import Tokenizer
from domain.agent import AgentConfig
from domain.conversation import Conversation, Message
from domain.ids import ConversationId
from domain.memory import MemoryPolicy, check_history, history_from_turns, recent_window, turn_pair
from domain.memory_archive import ArchiveEntry, RankedEntry, newest_entries, rank_archive, unarchived
from domain.memory_entities import EntitySheet
from domain.memory_recall import select_recall
from domain.messages import Msg
from domain.prompt import PromptMemory

log = logging.getLogger(__name__)
T = TypeVar("T")


class ShortTermMemory:
    """The short-term tier: served from the memory store, rebuilt from the record on a miss."""

    def __init__(
        self, store: MessageStore, memory: MemoryStore, tokenizer: Tokenizer, policy: MemoryPolicy | None = None
    ) -> None:
        self._store = store
        self._memory = memory
        self._tokenizer = tokenizer
        self._policy = policy or MemoryPolicy()

    async def window(self, conversation: Conversation, config: AgentConfig) -> list[Msg]:
        """What the prompt gets: the last `dialog_round` completed turns, within the token budget."""
        stored = await self.stored(conversation.id, config)
        return recent_window(stored, config.dialog_round, config.history_max_tokens, self._tokenizer.count)

    async def stored(self, conversation_id: ConversationId, config: AgentConfig) -> list[Msg]:
        """The short-term store: completed turns not archived yet, oldest first."""
        cached = await self._memory.get_window(conversation_id)
        if cached is None:
            cached = await self._rebuild(conversation_id, config)
        check_history(cached)
        return cached

    async def remember(self, finished: Message, config: AgentConfig) -> None:
        """Add a finished turn to the short-term store; only completed turns are history."""
        if not finished.is_completed_turn:
            return
        # On a miss nothing is written: the next read rebuilds from the record, which holds this turn.
        await self._memory.append_to_window(finished.conversation_id, turn_pair(finished))

    async def _rebuild(self, conversation_id: ConversationId, config: AgentConfig) -> list[Msg]:
        turns = await self._store.recent_messages(conversation_id, self._policy.rebuild_turns(config.dialog_round))
        window = history_from_turns(unarchived(turns, await self._memory.archive(conversation_id)))
        return await self._memory.restore_window(conversation_id, window)


def long_term_memory(conversation: Conversation) -> PromptMemory:
    """Long-term memory without the archive and entity tiers: the rolling summary only."""
    return PromptMemory(summary=conversation.summary)


@dataclass(frozen=True, slots=True)
class Recall:
    memory: PromptMemory
    report: dict[str, Any] = field(default_factory=dict)

    @property
    def observation(self) -> str:
        """The `long_term_memory_recall` event's observation: what was recalled, and why."""
        return json.dumps(self.report, ensure_ascii=False)


class MemoryRecall:
    """The long-term and entity tiers at recall time.

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
    ) -> None:
        self._memory = memory
        self._entities = entities
        self._embedder = embedder
        self._tokenizer = tokenizer
        self._policy = policy or MemoryPolicy()

    async def recall(
        self, conversation: Conversation, config: AgentConfig, query: str, window: list[Msg]
    ) -> Recall:
        policy, problems = self._policy, list[str]()
        # Both tiers at once: with a memory server, one round trip of waiting instead of two.
        archive_problems: list[str] = []
        async with asyncio.TaskGroup() as reads:
            sheet_read = reads.create_task(
                _safely(self._entities.entity_sheet(conversation.id), EntitySheet(), "entities", problems)
            )
            archive_read = reads.create_task(_safely(self._archive(conversation.id), [], "archive", archive_problems))
        sheet, stored = sheet_read.result(), archive_read.result()
        problems.extend(archive_problems)  # in a fixed order, whichever read ended first
        entries = [e for e in stored if e.summary.strip()]  # a batch of small talk folds to nothing
        ranked, ranking = await self._rank(entries, query, problems)
        # `summary_enabled` governs the upkeep; a summary already there (say, from before) is recalled.
        selection = select_recall(
            sheet.for_prompt(policy.entity_min_confidence), conversation.summary, ranked,
            policy.recall_max_tokens, self._tokenizer.count,
        )
        memory = PromptMemory(
            summary=selection.summary,
            archive=tuple(r.entry.summary for r in selection.archive),
            entities=selection.entities,
        )
        floor = policy.entity_min_confidence
        report: dict[str, Any] = {
            "short_term_messages": len(window),
            "short_term": {
                "turns": len(window) // 2,
                "why": f"the last {config.dialog_round} completed turns within {config.history_max_tokens} tokens",
            },
            "entities": [
                {"type": e.type, "value": e.value, "confidence": e.confidence,
                 "why": f"current value, confidence >= {floor:g}"}
                for e in selection.entities
            ],
            "entities_left_out": [
                {"type": e.type, "value": e.value, "confidence": e.confidence, "why": f"confidence below {floor:g}"}
                for e in sheet.below(floor)
            ],
            "summary": selection.summary,
            "archive": [
                {"id": r.entry.id, "score": None if r.score is None else round(r.score, 4),
                 "source_message_ids": list(r.entry.source_message_ids), "summary": r.entry.summary}
                for r in selection.archive
            ],
            "archive_entries": len(entries),
            "archive_ranking": ranking,
            "left_out": [f"{d} (over the recall budget of {policy.recall_max_tokens} tokens)"
                         for d in selection.dropped],
        }
        if problems:
            report["problems"] = problems
        return Recall(memory, report)

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


async def _safely(work: Awaitable[T], fallback: T, tier: str, problems: list[str]) -> T:
    try:
        return await work
    except ApplicationError as failure:
        log.warning("recall of %s failed, going on without it: %s", tier, failure.message)
        problems.append(f"{tier}: {failure.message}")
        return fallback
