"""Recall (§3 step 3) and the short-term upkeep after a turn (§3 step 7)."""

from __future__ import annotations

from application.ports.memory_store import MemoryStore
from application.ports.message_store import MessageStore
from application.ports.runtime import Tokenizer
from domain.agent import AgentConfig
from domain.conversation import Conversation, Message
from domain.memory import check_history, history_from_turns, trim_history, turn_pair
from domain.messages import Msg
from domain.prompt import RecalledMemory


class ShortTermMemory:
    """The short-term window: served from the memory store, rebuilt from the record on a miss."""

    def __init__(self, store: MessageStore, memory: MemoryStore, tokenizer: Tokenizer) -> None:
        self._store = store
        self._memory = memory
        self._tokenizer = tokenizer

    async def window(self, conversation: Conversation, config: AgentConfig) -> list[Msg]:
        cached = await self._memory.get_window(conversation.id)
        if cached is None:
            cached = await self._rebuild(conversation, config)
        check_history(cached)
        recent = cached[len(cached) - 2 * config.dialog_round :] if config.dialog_round else []
        return trim_history(recent, config.history_max_tokens, self._tokenizer.count)

    async def remember(self, finished: Message, config: AgentConfig) -> None:
        """Add a finished turn to the cached window; only completed turns are history."""
        if not finished.is_completed_turn:
            return
        cached = await self._memory.get_window(finished.conversation_id)
        if cached is None:
            return  # the next turn rebuilds it from the record, which already holds this one
        window = [*cached, *turn_pair(finished)]
        keep = 2 * config.dialog_round
        await self._memory.save_window(finished.conversation_id, window[len(window) - keep :] if keep else [])

    async def _rebuild(self, conversation: Conversation, config: AgentConfig) -> list[Msg]:
        turns = await self._store.recent_messages(conversation.id, config.dialog_round)
        window = history_from_turns(turns)
        await self._memory.save_window(conversation.id, window)
        return window


def long_term_memory(conversation: Conversation) -> RecalledMemory:
    return RecalledMemory(summary=conversation.summary)
