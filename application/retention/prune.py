"""Prune: what the retention policy no longer keeps, removed in bounded batches (docs/ARCHITECTURE.md §5).

One prune runs at a time across workers (`PruneLock`; another one skips). Each batch is one short
transaction of at most `BatchLimits.size` rows, followed by a pause, so a turn never waits long for
the database. Kinds go in `PruneKind`'s order. A deleted conversation goes as its delete would have
left it: its memory first (cache and record: window, entities, archive and summary items, upkeep
state), then its steps, then the workflow runs its messages called (a run once its node runs are
gone), then its messages (each batch's event logs expired first), its row last, so a prune cut
short is finished by the next one and nothing left points at a removed row. Direct workflow runs
past their age go last, the same way. A dry run counts, and removes nothing.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING

from application.ports.pruning import DirectRunsBefore, RunsCalledIn
from domain.retention import PruneBatch, PruneCounts, PruneKind, PruneReport

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from datetime import datetime

    from application.ports.event_log import EventLog
    from application.ports.memory_store import MemoryStore
    from application.ports.pruning import PrunedRuns, PruneLock, PruneStore
    from application.ports.runtime import Clock
    from domain.ids import ConversationId
    from domain.retention import BatchLimits, RetentionPolicy

log = logging.getLogger(__name__)

EXPIRE_AT_ONCE = 0.001  # seconds: an event log's retention, so that it is gone now


class Prune:
    def __init__(
        self,
        store: PruneStore,
        lock: PruneLock,
        memory: MemoryStore,
        events: EventLog,
        clock: Clock,
        policy: RetentionPolicy,
        limits: BatchLimits,
    ) -> None:
        self._store = store
        self._lock = lock
        self._memory = memory
        self._events = events
        self._clock = clock
        self._policy = policy
        self._limits = limits

    async def __call__(self, *, dry_run: bool = False) -> PruneReport:
        cutoffs = self._policy.cutoffs(self._clock.now())
        if dry_run:
            return PruneReport(await self._store.count(cutoffs), dry_run=True)
        async with self._lock.exclusive() as held:
            if not held:
                log.info("prune skipped: another worker is pruning")
                return PruneReport(PruneCounts(), skipped=True)
            run = _Run(self._clock, self._limits)
            if cutoffs.deleted_conversations is not None:
                await self._conversations(run, cutoffs.deleted_conversations)
            size = self._limits.size
            for kind, before, remove in (
                (PruneKind.STEPS, cutoffs.steps, self._store.delete_steps),
                (PruneKind.PROMPT_SNAPSHOTS, cutoffs.prompt_snapshots, self._store.empty_prompts),
                (PruneKind.MODEL_CALLS, cutoffs.model_calls, self._store.delete_model_calls),
            ):
                if before is not None:
                    await run.until_done(kind, kind.value, partial(remove, before, size))
            if cutoffs.workflow_runs is not None:
                await self._runs(run, PruneKind.WORKFLOW_RUNS, DirectRunsBefore(cutoffs.workflow_runs),
                                 ("node_runs", "workflow_runs"))
        report = run.report()
        if report.counts.total:
            log.info("pruned %s in %d batches", report.counts.as_dict(), len(report.batches))
        return report

    async def _conversations(self, run: _Run, deleted_before: datetime) -> None:
        while expired := await self._store.expired_conversations(deleted_before, self._limits.size):
            for conversation_id in expired:
                await self._purge(run, conversation_id, deleted_before)

    async def _purge(self, run: _Run, conversation_id: ConversationId, deleted_before: datetime) -> None:
        size = self._limits.size
        await self._memory.forget(conversation_id)
        await run.until_done(PruneKind.DELETED_CONVERSATIONS, "conversation_steps",
                             lambda: self._store.delete_conversation_steps(conversation_id, size))
        await self._runs(run, PruneKind.DELETED_CONVERSATIONS, RunsCalledIn(conversation_id),
                         ("conversation_node_runs", "conversation_workflow_runs"))

        async def messages() -> int:
            batch = await self._store.conversation_messages(conversation_id, size)
            for message in batch:  # before the rows: no log is left without its message
                await self._events.close(message.task_id, EXPIRE_AT_ONCE)
            return await self._store.delete_messages([message.id for message in batch]) if batch else 0

        await run.until_done(PruneKind.DELETED_CONVERSATIONS, "conversation_messages", messages)
        if await self._store.delete_conversation(conversation_id, deleted_before):
            run.count("deleted_conversations", 1)

    async def _runs(self, run: _Run, kind: PruneKind, runs: PrunedRuns, counted: tuple[str, str]) -> None:
        """A batch of node runs, then the runs left without any, in turn, until neither removes a row;
        `counted` names the counts of each. In turn, so that a run whose node runs are gone goes at
        once, and the next batch of node runs does not read past it again."""
        size = self._limits.size
        nodes = partial(self._store.delete_node_runs, runs, size)
        emptied = partial(self._store.delete_workflow_runs, runs, size)
        while await run.once(kind, counted[0], nodes) + await run.once(kind, counted[1], emptied):
            pass


class _Run:
    """One prune's batches and counts; each batch is timed and followed by the pause."""

    def __init__(self, clock: Clock, limits: BatchLimits) -> None:
        self._clock = clock
        self._limits = limits
        self._batches: list[PruneBatch] = []
        self._counts = PruneCounts()

    async def until_done(self, kind: PruneKind, counted: str, batch: Callable[[], Awaitable[int]]) -> None:
        """Run `batch` until it removes nothing, adding what it removed to the count named `counted`."""
        while await self.once(kind, counted, batch):
            pass

    async def once(self, kind: PruneKind, counted: str, batch: Callable[[], Awaitable[int]]) -> int:
        """Run `batch` once; the rows it removed, added to the count named `counted`."""
        started = self._clock.monotonic()
        rows = await batch()
        if rows:
            self._batches.append(PruneBatch(kind, rows, self._clock.monotonic() - started))
            self.count(counted, rows)
            await asyncio.sleep(self._limits.pause)
        return rows

    def count(self, counted: str, rows: int) -> None:
        self._counts = replace(self._counts, **{counted: getattr(self._counts, counted) + rows})

    def report(self) -> PruneReport:
        return PruneReport(self._counts, tuple(self._batches))
