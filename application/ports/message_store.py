from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from domain.accounts.viewers import Viewer
from domain.billing.model_calls import ModelCall
from domain.conversations.conversation import Conversation, Message, MessageAgentThought
from domain.ids import AppId, ConversationId, EndUserId, MessageId, OwnerId


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


class MessageStore(Protocol):
    """The durable record: conversations, messages and their steps.

    Each method is one transaction. Raises `StoreUnavailable` when the database fails.
    """

    async def get_conversation(self, conversation_id: ConversationId, owner: OwnerId) -> Conversation | None:
        """The conversation if it exists, is not deleted and belongs to `owner`."""
        ...

    async def open_turn(self, message: Message, new_conversation: Conversation | None) -> Conversation | None:
        """Persist a turn's query in one transaction, and return its conversation as that left it.

        With `new_conversation`, both are created. Otherwise the message's conversation must
        exist, be visible to the message's owner, and have no turn running (else `Conflict`);
        None means it was not found, and nothing was written. A regeneration (a message with a
        `parent_message_id`) must answer the conversation's latest message, else `Conflict`.
        The conversation's activity time and message count move with the new message, in the
        conversation returned too.
        """
        ...

    async def finish_message(
        self, message: Message, steps: Sequence[MessageAgentThought], calls: Sequence[ModelCall] = ()
    ) -> None:
        """Persist a turn's outcome, all its steps and its own model calls (for the model-call
        ledger, `ModelCallLedger`) in one transaction.

        Only a running message can finish: otherwise (unknown, or already finished) `NotFound`.
        A regeneration that completes supersedes the siblings it answers again.
        """
        ...

    async def running_messages(self, created_before: datetime, limit: int) -> list[Message]:
        """Messages still running that were created before `created_before`, oldest first."""
        ...

    async def save_summary(self, conversation: Conversation) -> None: ...

    async def get_message(self, message_id: MessageId, owner: OwnerId) -> Message | None: ...

    async def recent_messages(self, conversation_id: ConversationId, limit: int) -> list[Message]:
        """The last `limit` completed turns (status normal, answer set, not superseded), oldest first."""
        ...

    async def conversation_tail(
        self, conversation_id: ConversationId, owner: OwnerId, limit: int
    ) -> tuple[Conversation, list[Message]] | None:
        """`get_conversation` and its `recent_messages`, read in one transaction; None when not found."""
        ...

    async def list_messages(
        self, conversation_id: ConversationId, offset: int, limit: int
    ) -> list[Message]:
        """A page of all messages, oldest first."""
        ...

    async def list_steps(self, message_id: MessageId) -> list[MessageAgentThought]:
        """A message's steps by position."""
        ...

    async def latest_message(self, conversation_id: ConversationId) -> Message | None:
        """The conversation's newest message, whatever its status."""
        ...

    async def list_conversations(self, query: ConversationFilter) -> list[ConversationListing]:
        """A page of the viewer's visible conversations, newest activity first, after `query.after`."""
        ...

    async def update_conversation(self, conversation: Conversation, *, title: bool = True, pinned: bool = True) -> bool:
        """Save its title (as set by hand) and/or its pin, nothing else; False when it is gone."""
        ...

    async def save_auto_title(self, conversation_id: ConversationId, title: str, at: datetime) -> bool:
        """Set an automatic title only while it has none and none was set by hand; whether it took."""
        ...

    async def delete_conversation(self, conversation_id: ConversationId, owner: OwnerId, at: datetime) -> bool:
        """Soft delete (and clear its summary): gone from every list and read. False if not found."""
        ...

    async def save_feedback(self, message: Message) -> bool:
        """Save the message's rating and note; False when it is gone."""
        ...

    async def save_follow_ups(self, message_id: MessageId, questions: Sequence[str]) -> None:
        """Cache the follow-up questions made for a message."""
        ...

    async def conversation_with_history(
        self, owner: OwnerId, end_user: EndUserId, agent_id: AppId, fingerprint: str
    ) -> ConversationId | None:
        """The end user's newest live (not debugger) conversation of the agent whose history — the
        history its client brought when it began (`Conversation.history_prefix`), then its completed
        turns, oldest first — has this fingerprint (`domain.conversations.chat_completions`). The store keeps each
        conversation's fingerprint as its turns complete (a regeneration's makes it again)."""
        ...
