"""What is added to a finished message: the end user's rating and the suggested follow-up questions.

Each method is one transaction. Raises `StoreUnavailable` when the database fails.
"""

from collections.abc import Sequence
from typing import Protocol

from domain.conversations.conversation import Message
from domain.ids import MessageId


class MessageAnnotations(Protocol):
    async def save_feedback(self, message: Message) -> bool:
        """Save the message's rating and note; False when it is gone."""
        ...

    async def save_follow_ups(self, message_id: MessageId, questions: Sequence[str]) -> None:
        """Cache the follow-up questions made for a message."""
        ...
