"""ContextConversation: the conversation an agent protocol's context names (A2A's `contextId`).

A client of such a protocol names its context before the turn starts and must be told, with the
answer, which context it is in. The context continues the conversation it names when that is the
viewer's own conversation of the agent; any other context (one the client made up, another
owner's, another agent's) starts a new conversation, whose id memagent makes: a client's string is
never taken as a conversation id.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from domain.ids import ConversationId

if TYPE_CHECKING:
    from application.ports.conversation_reader import ConversationReader
    from application.ports.runtime import IdGenerator
    from domain.accounts.viewers import Viewer
    from domain.ids import AppId

MAX_CONTEXT_ID = 64


@dataclass(frozen=True, slots=True)
class ContextChoice:
    conversation_id: ConversationId
    new: bool  # True: a new conversation takes this id with the turn (ChatRequest.new_conversation_id)


class ContextConversation:
    def __init__(self, store: ConversationReader, ids: IdGenerator) -> None:
        self._store = store
        self._ids = ids

    async def __call__(self, viewer: Viewer, agent_id: AppId, context_id: str | None) -> ContextChoice:
        if context_id and len(context_id) <= MAX_CONTEXT_ID:
            named = ConversationId(context_id)
            conversation = await self._store.get_conversation(named, viewer.owner)
            if (conversation is not None and viewer.sees(conversation) and conversation.app_id == agent_id
                    and not conversation.is_debug):
                return ContextChoice(named, new=False)
        return ContextChoice(ConversationId(self._ids.new_id()), new=True)
