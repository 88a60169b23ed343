"""Memory upkeep after a turn (§3 step 7): entities, the rolling summary, archive compaction.

It runs off the request path: `after_end` spawns it once the turn's terminal event is out, so
it never delays `agent_end`. Entity extraction runs there too, unless the policy says inline
(then `before_end` does it before the terminal event, so the next turn surely sees them).

Each job fails alone, logged, and never fails the turn:
- the summary follows a cursor (the last summarised turn), so a failed update is caught up by
  the next turn's upkeep;
- compaction runs whenever the short-term store is over its threshold, so a failed fold is
  retried next time; folding is a compare-and-set on the store, so two workers never archive a
  turn twice nor skip one;
- malformed extraction output is dropped with a log line; stored entities are untouched.

One upkeep at a time per conversation (`UpkeepLedger.exclusive`), across processes when the
backend is shared.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

from application.errors import ApplicationError
from application.memory.recall_memory import ShortTermMemory
from application.ports.embedder import Embedder
from application.ports.memory_models import EntityExtractor, Summarizer
from application.ports.memory_store import EntityMemory, MemoryStore, UpkeepLedger
from application.ports.message_store import MessageStore
from application.ports.runtime import Clock, TaskSpawner
from domain.agent import AgentConfig
from domain.conversation import Message
from domain.entity_extraction import read_extraction
from domain.errors import DomainError
from domain.ids import ConversationId, TaskId
from domain.memory import Exchange, MemoryPolicy, exchanges_of
from domain.memory_archive import ArchiveEntry, due_for_archive
from domain.memory_entities import Entity
from domain.memory_summary import SUMMARY_CATCH_UP, UpkeepState, pending_for_summary

log = logging.getLogger(__name__)
T = TypeVar("T")

MAX_FOLDS_PER_RUN = 5  # batches one upkeep folds at most (a rebuilt store may be over by several)


class MemoryUpkeep:
    def __init__(
        self,
        store: MessageStore,
        short_term: ShortTermMemory,
        memory: MemoryStore,
        entities: EntityMemory,
        ledger: UpkeepLedger,
        summarizer: Summarizer,
        extractor: EntityExtractor,
        embedder: Embedder,
        spawner: TaskSpawner,
        clock: Clock,
        policy: MemoryPolicy | None = None,
    ) -> None:
        self._store = store
        self._short_term = short_term
        self._memory = memory
        self._entities = entities
        self._ledger = ledger
        self._summarizer = summarizer
        self._extractor = extractor
        self._embedder = embedder
        self._spawner = spawner
        self._clock = clock
        self._policy = policy or MemoryPolicy()
        self._running = 0
        self._idle: asyncio.Event | None = None
        self._waiting: dict[ConversationId, _Batch] = {}  # per conversation: the upkeep not started yet

    async def before_end(self, config: AgentConfig, finished: Message) -> None:
        """Inline entity extraction, when the policy asks for it. Never raises."""
        if self._policy.inline_entities and finished.is_completed_turn:
            await _guard("entity extraction", finished.conversation_id, self.extract_entities(finished))

    def after_end(self, config: AgentConfig, finished: Message) -> None:
        """Schedule the upkeep of a finished turn in the background. Never raises.

        Turns of one conversation that finish while its upkeep waits for the lock join that
        upkeep, so under load the summary is updated once for several turns, not once each.
        """
        if not finished.is_completed_turn:
            return
        waiting = self._waiting.get(finished.conversation_id)
        if waiting is not None:
            waiting.config = config
            waiting.turns.append(finished)
            return
        batch = _Batch(config, [finished])
        self._waiting[finished.conversation_id] = batch
        self._started()
        work = self._tracked(batch)
        try:
            self._spawner.spawn(TaskId(f"upkeep-{finished.id}"), work)
        except Exception:  # scheduling must not fail a turn that already ended
            work.close()
            del self._waiting[finished.conversation_id]
            self._ended()
            log.exception("could not schedule memory upkeep of message %s", finished.id)

    async def wait_idle(self) -> None:
        """Until no upkeep scheduled by this instance is running (for tests and benchmarks)."""
        while self._running:
            await self._idle_event().wait()

    async def _tracked(self, batch: _Batch) -> None:
        try:
            await self._run(batch)
        finally:
            self._ended()

    def _started(self) -> None:
        self._running += 1
        self._idle_event().clear()

    def _ended(self) -> None:
        self._running -= 1
        if not self._running:
            self._idle_event().set()

    def _idle_event(self) -> asyncio.Event:
        if self._idle is None:
            self._idle = asyncio.Event()
        return self._idle

    async def run(self, config: AgentConfig, finished: Sequence[Message]) -> None:
        """The whole upkeep of finished turns of one conversation, oldest first. Never raises
        (but lets cancellation through)."""
        if finished:
            await self._run(_Batch(config, list(finished)))

    async def _run(self, batch: _Batch) -> None:
        conversation_id = batch.turns[0].conversation_id
        try:
            async with self._ledger.exclusive(conversation_id):
                self._close(conversation_id, batch)  # a turn finishing from now on queues a new upkeep
                await self._upkeep(batch.config, batch.turns)
        except ApplicationError as failure:  # the lock or the upkeep state could not be had
            log.warning("memory upkeep of conversation %s skipped: %s", conversation_id, failure.message)
        finally:
            self._close(conversation_id, batch)

    def _close(self, conversation_id: ConversationId, batch: _Batch) -> None:
        if self._waiting.get(conversation_id) is batch:
            del self._waiting[conversation_id]

    async def _upkeep(self, config: AgentConfig, turns: Sequence[Message]) -> None:
        conversation_id = turns[-1].conversation_id
        state = await self._ledger.upkeep_state(conversation_id)
        if not self._policy.inline_entities:
            for finished in turns:
                if state.forgotten_at is None or finished.created_at > state.forgotten_at:
                    await _guard("entity extraction", conversation_id, self.extract_entities(finished))
        if config.summary_enabled:
            # Enough recent turns to find the cursor before the oldest of this batch.
            catch_up = max(SUMMARY_CATCH_UP, len(turns) + 1)
            await _guard("summary", conversation_id, self._summarize(turns[-1], state, catch_up))
        await _guard("archive compaction", conversation_id, self.compact(config, conversation_id))

    async def extract_entities(self, finished: Message) -> int:
        """Extract the exchange's entities and merge them into entity memory; how many were kept."""
        payload = await self._extractor.extract(Exchange.of(finished))
        extraction = read_extraction(payload)
        for problem in extraction.problems:
            log.warning("entity extraction of message %s: dropped: %s", finished.id, problem)
        entities = [
            Entity(e.type, e.value, e.confidence, finished.id, finished.created_at) for e in extraction.entities
        ]
        if entities:
            await self._entities.record_entities(
                finished.conversation_id, entities, self._policy.entity_min_confidence
            )
        return len(entities)

    async def _summarize(self, finished: Message, state: UpkeepState, catch_up: int) -> None:
        conversation_id = finished.conversation_id
        tail = await self._store.conversation_tail(conversation_id, finished.owner, catch_up)
        if tail is None:  # deleted meanwhile
            return
        conversation, turns = tail
        pending = pending_for_summary(turns, state, bool(conversation.summary.strip()))
        if not pending:
            return
        limit = self._policy.summary
        text = limit.trim(await self._summarizer.update(conversation.summary, [Exchange.of(t) for t in pending], limit))
        if not text and conversation.summary.strip():
            raise DomainError("the summariser returned nothing; the summary is kept as it was")
        if text != conversation.summary:  # nothing worth keeping yet (small talk) leaves it empty
            await self._store.save_summary(conversation.with_summary(text, self._clock.now()))
        await self._ledger.save_upkeep_state(conversation_id, replace(state, summarized_through=pending[-1].id))

    async def compact(self, config: AgentConfig, conversation_id: ConversationId) -> list[ArchiveEntry]:
        """Fold the oldest batches of the short-term store into archive entries while it is over
        its threshold; the entries this call added."""
        policy, added = self._policy, list[ArchiveEntry]()
        for _ in range(MAX_FOLDS_PER_RUN):
            stored = await self._short_term.stored(conversation_id, config)
            batch = due_for_archive(stored, policy.compact_threshold, policy.compact_batch)
            if not batch:
                break
            exchanges = exchanges_of(batch)
            # An empty summary (nothing but small talk) still folds the batch: the store must shrink.
            text = policy.summary.trim(await self._summarizer.condense(exchanges, policy.summary))
            sources = tuple(e.message_id for e in exchanges)
            entry = ArchiveEntry(
                ArchiveEntry.id_for(conversation_id, sources), conversation_id, text, sources, self._clock.now()
            )
            if not await self._memory.fold_into_archive(conversation_id, entry):
                log.info("conversation %s: another worker folded these turns first", conversation_id)
                break
            added.append(entry)
            if entry.summary:  # embedded now, so that recall finds its vector in the cache (a model's)
                await _guard("archive embedding", conversation_id, self._embedder.embed([entry.summary]))
        return added


@dataclass(slots=True)
class _Batch:
    """Finished turns of one conversation that one upkeep takes care of; the newest config wins."""

    config: AgentConfig
    turns: list[Message]


async def _guard(job: str, conversation_id: ConversationId, work: Awaitable[T]) -> T | None:
    try:
        return await work
    except ApplicationError as failure:
        log.warning("memory upkeep (%s) of conversation %s failed, retried later: %s",
                    job, conversation_id, failure.message)
    except DomainError as failure:
        log.warning("memory upkeep (%s) of conversation %s failed: %s", job, conversation_id, failure)
    except Exception:
        log.exception("memory upkeep (%s) of conversation %s failed", job, conversation_id)
    return None
