"""Conversations as the durable record has them: one by id, a viewer's list, and the one whose
history a client brings again.

Each method is one transaction. Raises `StoreUnavailable` when the database fails.
"""

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from domain.accounts.viewers import Viewer
from domain.conversations.conversation import Conversation, Message
from domain.ids import AppId, ConversationId, EndUserId, OwnerId


@dataclass(frozen=True, slots=True)
class ListPosition:
    """Where a page of conversations ends: the last one's activity time and id."""

    active_at: datetime
    conversation_id: ConversationId


@dataclass(frozen=True, slots=True)
class ConversationFilter:
    """Which of the viewer's conversations a list shows, newest activity first."""

    viewer: Viewer
    agent_id: AppId | None = None
    pinned: bool | None = None
    search: str = ""  # within titles and messages (queries and answers), case-insensitive
    include_debug: bool = False
    after: ListPosition | None = None
    limit: int = 20


@dataclass(frozen=True, slots=True)
class ConversationListing:
    conversation: Conversation
    last_message: Message | None


class ConversationReader(Protocol):
    async def get_conversation(self, conversation_id: ConversationId, owner: OwnerId) -> Conversation | None:
        """The conversation if it exists, is not deleted and belongs to `owner`."""
        ...

    async def latest_message(self, conversation_id: ConversationId) -> Message | None:
        """The conversation's newest message, whatever its status."""
        ...

    async def list_conversations(self, query: ConversationFilter) -> list[ConversationListing]:
        """A page of the viewer's visible conversations, newest activity first, after `query.after`."""
        ...

    async def conversation_with_history(
        self, owner: OwnerId, end_user: EndUserId, agent_id: AppId, fingerprint: str
    ) -> ConversationId | None:
        """The end user's newest live (not debugger) conversation of the agent whose history — the
        history its client brought when it began (`Conversation.history_prefix`), then its completed
        turns, oldest first — has this fingerprint (`domain.conversations.chat_completions`). The store keeps each
        conversation's fingerprint as its turns complete (a regeneration's makes it again)."""
        ...
