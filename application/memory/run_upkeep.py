"""Memory upkeep of finished turns (docs/ARCHITECTURE.md §3 step 7): the digest (the rolling
summary and the entities, one model call with an LLM), archive compaction and the recall index,
under one lock per conversation.

The jobs are their own use cases (`digest_turns`, `fold_archive`, `index_memory`); when they run
is `schedule_upkeep`'s business. The digest comes first, so a fold never takes turns out of the
short-term store before the summary covers them. Each job fails alone (`best_effort`), logged,
and never fails the turn: the digest's cursor and the fold's compare-and-set make a later run
catch up. The inline entity extraction of one turn (`extract_inline`) is `extract_entities`'.

One upkeep at a time per conversation (`UpkeepLedger.exclusive`), across processes when the
backend is shared.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from application.best_effort import best_effort
from application.errors import ApplicationError
from application.model_calls.budgets import BudgetExceeded
from application.ports.tracing import NO_TRACER, SpanName, Tracer
from domain.memory.summary import SUMMARY_CATCH_UP

if TYPE_CHECKING:
    from collections.abc import Awaitable, Sequence

    from application.memory.digest_turns import DigestTurns
    from application.memory.extract_entities import ExtractEntities
    from application.memory.fold_archive import FoldArchive
    from application.memory.index_memory import IndexMemory
    from application.model_calls.budgets import CheckBudgets
    from application.ports.memory_store import UpkeepLedger
    from domain.agents.config import AgentConfig
    from domain.conversations.conversation import Message
    from domain.ids import ConversationId
    from domain.memory.window import MemoryPolicy

log = logging.getLogger(__name__)
T = TypeVar("T")
_UPKEEP = "memory upkeep"


@dataclass(slots=True)
class PendingUpkeep:
    """Finished turns of one conversation that one upkeep takes care of; the newest config wins.

    Turns may join until the upkeep holds the conversation's lock (`closed`)."""

    config: AgentConfig
    turns: list[Message]
    closed: bool = field(default=False)


class MemoryUpkeep:
    def __init__(
        self,
        ledger: UpkeepLedger,
        extract_entities: ExtractEntities,
        digest_turns: DigestTurns,
        fold_archive: FoldArchive,
        policy: MemoryPolicy,
        index_memory: IndexMemory | None = None,
        tracer: Tracer = NO_TRACER,
        budgets: CheckBudgets | None = None,
    ) -> None:
        self._ledger = ledger
        self._extract = extract_entities
        self._digest = digest_turns
        self._fold = fold_archive
        self._policy = policy
        self._index = index_memory
        self._tracer = tracer
        self._budgets = budgets  # None: no budgets (application/model_calls/budgets.py)

    @property
    def extracts_inline(self) -> bool:
        return self._policy.inline_entities

    async def extract_inline(self, config: AgentConfig, finished: Message) -> None:
        """Inline entity extraction, before the turn's terminal event. Never raises."""
        what = f"{_UPKEEP} (entity extraction) of conversation {finished.conversation_id}"
        await self._job(SpanName.UPKEEP_ENTITIES, finished.conversation_id, self._extract(finished, config), what,
                        retried=False)

    async def run(self, config: AgentConfig, finished: Sequence[Message]) -> None:
        """The whole upkeep of finished turns of one conversation, oldest first. Never raises
        (but lets cancellation through)."""
        if finished:
            await self.run_pending(PendingUpkeep(config, list(finished)))

    async def run_pending(self, pending: PendingUpkeep) -> None:
        await self.run_for(pending.config, pending.turns[-1], len(pending.turns), pending)

    async def run_for(
        self, config: AgentConfig, newest: Message, turns: int, pending: PendingUpkeep | None = None
    ) -> None:
        """The upkeep of `turns` finished turns, `newest` the last (a background job names them so).
        Never raises (but lets cancellation through)."""
        conversation_id = newest.conversation_id
        try:
            async with self._ledger.exclusive(conversation_id):
                if pending is not None:
                    pending.closed = True  # a turn finishing from now on needs an upkeep of its own
                    # The turns that joined while it waited for the lock are its own too: read from
                    # further back, a digest of only the newest few would skip them (and their facts).
                    config, newest, turns = pending.config, pending.turns[-1], len(pending.turns)
                await self._budgeted(config, newest, turns)
        except ApplicationError as failure:  # the lock or the upkeep state could not be had
            log.warning("memory upkeep of conversation %s skipped: %s", conversation_id, failure.message)
        finally:
            if pending is not None:
                pending.closed = True

    async def _budgeted(self, config: AgentConfig, newest: Message, turns: int) -> None:
        """The jobs, under a reservation of their estimate when a budget applies; skipped when the
        budget is spent: the turns wait in the window for the next upkeep once it has room."""
        hold = None
        if self._budgets is not None:
            holder = f"upkeep:{newest.conversation_id}:{newest.id}"
            try:
                hold = await self._budgets.for_upkeep(newest.owner, config, holder)
            except BudgetExceeded as spent:
                log.info("memory upkeep of conversation %s skipped: %s", newest.conversation_id, spent.message)
                return
        jobs = self._jobs(config, newest, turns)
        await (jobs if hold is None else hold.during(jobs))

    async def _jobs(self, config: AgentConfig, newest: Message, turns: int) -> None:
        conversation_id = newest.conversation_id
        state = await self._ledger.upkeep_state(conversation_id)
        # Enough recent turns to find the cursor before the oldest of this batch.
        catch_up = max(SUMMARY_CATCH_UP, turns + 1)
        digest = self._digest(config, newest, state, catch_up)
        what = f"{_UPKEEP} (summary and entities) of {conversation_id}"
        digested = await self._job(SpanName.UPKEEP_SUMMARY, conversation_id, digest, what)
        fold = self._fold(config, conversation_id)
        what = f"{_UPKEEP} (archive compaction) of {conversation_id}"
        folded = await self._job(SpanName.UPKEEP_ARCHIVE, conversation_id, fold, what)
        if self._index is not None:
            # The conversation as the digest left it (under this lock), not read a second time; its
            # new summary embedded before the index's write unless new entries join that embedding.
            known = digested.conversation if digested else None
            fresh = digested is not None and digested.saved and folded == []
            index = self._index(newest, config, known, fresh)
            await self._job(SpanName.UPKEEP_RECALL_INDEX, conversation_id, index,
                            f"{_UPKEEP} (recall index) of {conversation_id}")

    async def _job(
        self, name: SpanName, conversation_id: ConversationId, work: Awaitable[T], what: str, retried: bool = True
    ) -> T | None:
        """One job, best effort, in a span of its own (failed when the job did); its result, None
        when it failed."""
        with self._tracer.span(name, conversation_id=conversation_id) as span:
            result, failed = await best_effort(work, None, what, retried=retried)
            if failed is not None:
                span.fail(failed)
            return result
