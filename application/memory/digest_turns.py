"""The rolling summary and the entities of the turns an upkeep takes care of, from one digest (a
memory upkeep job, docs/ARCHITECTURE.md §3 step 7): with an LLM, one model call for both.

The digest follows a cursor, the last digested turn (`UpkeepState.summarized_through`): the turns
after it, with the old summary and the entities known so far, go to the digester (never the
conversation's whole prompt); the entities are merged turn by turn, the new summary saved, then
the cursor moves. Digesting the same turns twice changes nothing: the second finds none after the
cursor and calls no model. A failed digest leaves the cursor where it was, so the next upkeep
catches up. Entities extracted inline (before the turn's end) are not asked for again. The digest
runs on the agent's memory model (`AgentConfig.upkeep_model`). It hands on the conversation as it
left it in the store (`Digested`), so that the recall index after it does not read it again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from application.ports.conversation_writer import ConversationWriter
from application.ports.memory_models import DigestRequest
from application.ports.message_reader import MessageReader
from domain.errors import DomainError
from domain.memory.summary import UpkeepState, pending_for_summary
from domain.memory.window import Exchange, MemoryPolicy

if TYPE_CHECKING:
    from collections.abc import Sequence

    from application.memory.extract_entities import ExtractEntities
    from application.ports.memory_models import MemoryDigester
    from application.ports.memory_store import UpkeepLedger
    from application.ports.profile_work import OnProfile
    from application.ports.runtime import Clock
    from domain.agents.config import AgentConfig
    from domain.conversations.conversation import Conversation, Message


@dataclass(frozen=True, slots=True)
class Digested:
    """How many turns a digest took, and the conversation as stored after it: as read, with the
    summary it saved (None: it read none); `saved`: whether it saved a new summary."""

    turns: int
    conversation: Conversation | None = None
    saved: bool = False


class _Store(MessageReader, ConversationWriter, Protocol):
    """The record the turns to digest are read from and the rolling summary saved to."""


class DigestTurns:
    def __init__(
        self,
        store: _Store,
        ledger: UpkeepLedger,
        digester: OnProfile[MemoryDigester],
        entities: ExtractEntities,
        clock: Clock,
        policy: MemoryPolicy,
    ) -> None:
        self._store = store
        self._ledger = ledger
        self._digester = digester
        self._entities = entities
        self._clock = clock
        self._policy = policy

    async def __call__(
        self, config: AgentConfig, finished: Message, state: UpkeepState, catch_up: int
    ) -> Digested:
        """Digest the turns after the cursor up to `finished`, reading at most `catch_up` recent
        turns."""
        if not config.summary_enabled and not (config.entities_enabled and not self._policy.inline_entities):
            return Digested(0)
        tail = await self._store.conversation_tail(finished.conversation_id, finished.owner, catch_up)
        if tail is None:  # deleted meanwhile
            return Digested(0)
        conversation, turns = tail
        stored = conversation  # what the store holds, whatever the digest starts from
        if await self._cursor_superseded(finished, state, turns):
            # The last update folded the answer this regeneration superseded: start from before it.
            conversation = conversation.with_summary(state.rollback_summary or "", conversation.updated_at)
            state = state.rolled_back()
        pending = pending_for_summary(turns, state, bool(conversation.summary.strip()))
        if not pending:
            return Digested(0, stored)
        text = await self._digest(config, conversation, pending)
        if text is not None and text != stored.summary:  # nothing worth keeping yet (small talk) leaves it empty
            saved = conversation.with_summary(text, self._clock.now())
            await self._store.save_summary(saved)
        else:
            saved = None
        await self._ledger.save_upkeep_state(conversation.id, state.advanced(pending[-1].id, conversation.summary))
        return Digested(len(pending), saved or stored, saved is not None)

    async def _digest(self, config: AgentConfig, conversation: Conversation, pending: Sequence[Message]) -> str | None:
        """One digester call; the entities merged, and the new summary (None: not kept by this agent)."""
        limit = self._policy.summary if config.summary_enabled else None
        extract = config.entities_enabled and not self._policy.inline_entities
        known = await self._entities.known(pending[-1], config) if extract else ()
        request = DigestRequest(conversation.summary, known, tuple(Exchange.of(t) for t in pending), limit, extract)
        digest = await self._digester(config.upkeep_model).digest(request)
        text = None
        if limit is not None:
            text = limit.trim(digest.summary or "")
            if not text and conversation.summary.strip():  # checked before anything is written
                raise DomainError("the digest returned no summary; the memory is kept as it was")
        if extract:
            for turn, payload in zip(pending, digest.extractions, strict=True):
                await self._entities.record(turn, payload, config)
        return text

    async def _cursor_superseded(self, finished: Message, state: UpkeepState, turns: Sequence[Message]) -> bool:
        """Whether the last update summarised an answer a regeneration has superseded since (so the
        turn left the history), and what came before it is known. Upkeep may run for a later turn
        than the regeneration, so the cursor's own record says it, not `finished`."""
        through = state.summarized_through
        if through is None or state.rollback_summary is None or any(turn.id == through for turn in turns):
            return False
        cursor = await self._store.get_message(through, finished.owner)
        return cursor is not None and cursor.superseded
