"""ReadConversationUsage: what a conversation's model calls cost, split by purpose.

A turn's own calls (`chat`) apart from the rest (upkeep, titles, follow-up questions, embeddings),
from the ledger. The viewer's rules are the conversation routes' own: an agent key reaches only its
agent's end users' conversations, an end user only theirs; any other reads as not found.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from application.conversations.visibility import visible_conversation
from domain.billing.model_calls import CHAT, PurposeUsage

if TYPE_CHECKING:
    from application.ports.conversation_reader import ConversationReader
    from application.ports.model_call_ledger import ModelCallLedger
    from domain.accounts.viewers import Viewer
    from domain.ids import ConversationId


@dataclass(frozen=True, slots=True)
class ConversationUsage:
    conversation_id: str
    purposes: tuple[PurposeUsage, ...]  # by purpose name, only purposes with calls

    @property
    def chat(self) -> PurposeUsage:
        return _sum(CHAT, [p for p in self.purposes if p.purpose == CHAT])

    @property
    def upkeep(self) -> PurposeUsage:
        """Every call besides the turns' own."""
        return _sum("upkeep", [p for p in self.purposes if p.purpose != CHAT])

    @property
    def total(self) -> PurposeUsage:
        return _sum("total", list(self.purposes))


class ReadConversationUsage:
    def __init__(self, store: ConversationReader, ledger: ModelCallLedger) -> None:
        self._store = store
        self._ledger = ledger

    async def __call__(self, conversation_id: ConversationId, viewer: Viewer) -> ConversationUsage:
        """Raises `NotFound` for a conversation the viewer does not reach, `StoreUnavailable`."""
        await visible_conversation(self._store, conversation_id, viewer)
        return ConversationUsage(conversation_id, tuple(await self._ledger.conversation_usage(conversation_id)))


def _sum(name: str, parts: list[PurposeUsage]) -> PurposeUsage:
    return PurposeUsage(
        name, sum(p.calls for p in parts), sum(p.prompt_tokens for p in parts),
        sum(p.completion_tokens for p in parts), sum(p.cost for p in parts), sum(p.estimated for p in parts),
    )
