"""The short-term tier: completed turns not archived yet, served from the memory store.

The memory store is a cache of the record: a miss is rebuilt from the message store, and so is
a cached window that is malformed (an odd number of messages, roles out of order), which is then
overwritten. Only a malformed record in the database fails a turn (`MalformedRecord`).

A conversation's first turn reads no record: it has no completed turn nor archive entry before it
(`Conversation.has_earlier_turns`), so its window starts empty in the store, where the turn's own
pair is then appended and its upkeep finds it, without a rebuild.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from application.errors import MalformedRecord
from domain.errors import DomainError, MalformedHistory
from domain.memory.archive import unarchived
from domain.memory.window import MemoryPolicy, check_history, history_from_turns, recent_window, turn_pair

if TYPE_CHECKING:
    from collections.abc import Collection

    from application.ports.memory_store import MemoryStore
    from application.ports.message_reader import MessageReader
    from application.ports.runtime import Tokenizer
    from domain.agents.config import AgentConfig
    from domain.conversations.conversation import Conversation, Message
    from domain.conversations.messages import Msg
    from domain.ids import ConversationId, MessageId


log = logging.getLogger(__name__)


class ShortTermMemory:
    """The short-term tier: served from the memory store, rebuilt from the record on a miss."""

    def __init__(
        self, store: MessageReader, memory: MemoryStore, tokenizer: Tokenizer, policy: MemoryPolicy | None = None
    ) -> None:
        self._store = store
        self._memory = memory
        self._tokenizer = tokenizer
        self._policy = policy or MemoryPolicy()

    async def window(
        self, conversation: Conversation, config: AgentConfig, without: Collection[MessageId] = ()
    ) -> list[Msg]:
        """What the prompt gets: the last `dialog_round` completed turns, within the token budget.
        `without`: turns a regeneration answers again, read from the record without them."""
        if without:
            stored = await self._from_record(conversation.id, config, without)
        elif not conversation.has_earlier_turns:
            stored = await self._memory.restore_window(conversation.id, ())
        else:
            stored = await self.stored(conversation.id, config)
        return recent_window(stored, config.dialog_round, config.history_max_tokens, self._tokenizer.count)

    async def stored(self, conversation_id: ConversationId, config: AgentConfig) -> list[Msg]:
        """The short-term store: completed turns not archived yet, oldest first."""
        cached = await self._memory.get_window(conversation_id)
        if cached is not None:
            try:
                check_history(cached)
            except MalformedHistory as broken:  # a half-written or corrupted cache entry: a miss
                log.warning("conversation %s: the cached window is malformed (%s); rebuilt from the record",
                            conversation_id, broken)
                window = await self._from_record(conversation_id, config)
                await self._memory.save_window(conversation_id, window)
                return window
            return cached
        return await self._memory.restore_window(conversation_id, await self._from_record(conversation_id, config))

    async def remember(self, finished: Message, config: AgentConfig) -> None:
        """Add a finished turn to the short-term store; only completed turns are history, and not
        those a review refused or replaced (`Message.is_history`), as the record's reads leave them out."""
        if not finished.is_completed_turn:
            return
        if finished.parent_message_id is not None:
            # A regeneration: its completion superseded the sibling the window holds, so the window
            # is read again from the record, which now has the newest sibling only (if no review blocked it).
            window = await self._from_record(finished.conversation_id, config)
            await self._memory.save_window(finished.conversation_id, window)
            return
        if not finished.is_history:
            return
        # On a miss nothing is written: the next read rebuilds from the record, which holds this turn.
        await self._memory.append_to_window(finished.conversation_id, turn_pair(finished))

    async def _from_record(
        self, conversation_id: ConversationId, config: AgentConfig, without: Collection[MessageId] = ()
    ) -> list[Msg]:
        """The short-term store as the record has it: the recent completed turns not archived."""
        turns = await self._store.recent_messages(conversation_id, self._policy.rebuild_turns(config.dialog_round))
        turns = [turn for turn in turns if turn.id not in without]
        try:
            window = history_from_turns(unarchived(turns, await self._memory.archive(conversation_id)))
            check_history(window)
        except DomainError as broken:  # only the record itself may fail a turn
            raise MalformedRecord(f"The conversation's stored history is malformed: {broken}.") from broken
        return window
