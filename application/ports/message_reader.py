"""Messages as the durable record has them: one by id, a conversation's turns, and a message's steps.

Each method is one transaction. Raises `StoreUnavailable` when the database fails.
"""

from typing import Protocol

from domain.conversations.conversation import Conversation, Message, MessageAgentThought
from domain.ids import ConversationId, MessageId, OwnerId


class MessageReader(Protocol):
    async def get_message(self, message_id: MessageId, owner: OwnerId) -> Message | None:
        """The message if it exists, belongs to `owner` and its conversation is not deleted."""
        ...

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
