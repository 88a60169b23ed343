from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from domain.conversation import Conversation, Message, MessageAgentThought
from domain.ids import ConversationId, MessageId, OwnerId


class MessageStore(Protocol):
    """The durable record: conversations, messages and their steps.

    Each method is one transaction. Raises `StoreUnavailable` when the database fails.
    """

    async def get_conversation(self, conversation_id: ConversationId, owner: OwnerId) -> Conversation | None:
        """The conversation if it exists, is not deleted and belongs to `owner`."""
        ...

    async def open_turn(self, message: Message, new_conversation: Conversation | None) -> Conversation | None:
        """Persist a turn's query in one transaction, and return its conversation.

        With `new_conversation`, both are created. Otherwise the message's conversation must
        exist, be visible to the message's owner, and have no turn running (else `Conflict`);
        None means it was not found, and nothing was written.
        """
        ...

    async def finish_message(self, message: Message, steps: Sequence[MessageAgentThought]) -> None:
        """Persist a turn's outcome and all its steps in one transaction.

        Only a running message can finish: otherwise (unknown, or already finished) `NotFound`.
        """
        ...

    async def running_messages(self, created_before: datetime, limit: int) -> list[Message]:
        """Messages still running that were created before `created_before`, oldest first."""
        ...

    async def save_summary(self, conversation: Conversation) -> None: ...

    async def get_message(self, message_id: MessageId, owner: OwnerId) -> Message | None: ...

    async def recent_messages(self, conversation_id: ConversationId, limit: int) -> list[Message]:
        """The last `limit` completed turns (status normal, answer set), oldest first."""
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
