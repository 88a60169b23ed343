"""Changes to a conversation after its turns: its title, pin and rolling summary, and its deletion.

Each method is one transaction. Raises `StoreUnavailable` when the database fails.
"""

from datetime import datetime
from typing import Protocol

from domain.conversations.conversation import Conversation
from domain.ids import ConversationId, OwnerId


class ConversationWriter(Protocol):
    async def update_conversation(self, conversation: Conversation, *, title: bool = True, pinned: bool = True) -> bool:
        """Save its title (as set by hand) and/or its pin, nothing else; False when it is gone."""
        ...

    async def save_auto_title(self, conversation_id: ConversationId, title: str, at: datetime) -> bool:
        """Set an automatic title only while it has none and none was set by hand; whether it took."""
        ...

    async def save_summary(self, conversation: Conversation) -> None:
        """Save the conversation's rolling summary and its update time."""
        ...

    async def delete_conversation(self, conversation_id: ConversationId, owner: OwnerId, at: datetime) -> bool:
        """Soft delete (and clear its summary): gone from every list and read. False if not found."""
        ...
