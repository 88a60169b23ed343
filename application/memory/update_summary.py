"""The rolling summary's write-back after turns (a memory upkeep job, docs/ARCHITECTURE.md §3 step 7).

The summary follows a cursor, the last summarised turn (`UpkeepState.summarized_through`): the
turns after it are folded into the old summary by the summariser, the new summary is saved on
the conversation, then the cursor moves. A failed update leaves the cursor where it was, so the
next upkeep catches up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from domain.errors import DomainError
from domain.memory import Exchange, MemoryPolicy
from domain.memory_summary import UpkeepState, pending_for_summary

if TYPE_CHECKING:
    from collections.abc import Sequence

    from application.ports.memory_models import Summarizer
    from application.ports.memory_store import UpkeepLedger
    from application.ports.message_store import MessageStore
    from application.ports.runtime import Clock
    from domain.conversation import Message


class UpdateSummary:
    def __init__(
        self, store: MessageStore, ledger: UpkeepLedger, summarizer: Summarizer, clock: Clock, policy: MemoryPolicy
    ) -> None:
        self._store = store
        self._ledger = ledger
        self._summarizer = summarizer
        self._clock = clock
        self._policy = policy

    async def __call__(self, finished: Message, state: UpkeepState, catch_up: int) -> None:
        """Summarise the turns after the cursor up to `finished`, reading at most `catch_up` recent turns."""
        conversation_id = finished.conversation_id
        tail = await self._store.conversation_tail(conversation_id, finished.owner, catch_up)
        if tail is None:  # deleted meanwhile
            return
        conversation, turns = tail
        stored = conversation.summary
        if await self._cursor_superseded(finished, state, turns):
            # The last update folded the answer this regeneration superseded: start from before it.
            conversation = conversation.with_summary(state.rollback_summary or "", conversation.updated_at)
            state = state.rolled_back()
        pending = pending_for_summary(turns, state, bool(conversation.summary.strip()))
        if not pending:
            return
        limit = self._policy.summary
        text = limit.trim(await self._summarizer.update(conversation.summary, [Exchange.of(t) for t in pending], limit))
        if not text and conversation.summary.strip():
            raise DomainError("the summariser returned nothing; the summary is kept as it was")
        if text != stored:  # nothing worth keeping yet (small talk) leaves it empty
            await self._store.save_summary(conversation.with_summary(text, self._clock.now()))
        await self._ledger.save_upkeep_state(conversation_id, state.advanced(pending[-1].id, conversation.summary))

    async def _cursor_superseded(self, finished: Message, state: UpkeepState, turns: Sequence[Message]) -> bool:
        """Whether the last update summarised an answer a regeneration has superseded since (so the
        turn left the history), and what came before it is known. Upkeep may run for a later turn
        than the regeneration, so the cursor's own record says it, not `finished`."""
        through = state.summarized_through
        if through is None or state.rollback_summary is None or any(turn.id == through for turn in turns):
            return False
        cursor = await self._store.get_message(through, finished.owner)
        return cursor is not None and cursor.superseded
