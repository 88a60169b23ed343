"""What deleting a conversation asks of memory: forget everything it holds of the conversation."""

from typing import Protocol

from domain.ids import ConversationId


class MemoryEraser(Protocol):
    async def erase(self, conversation_id: ConversationId) -> None:
        """Forget the conversation's memory (window, archive, entities), whoever may still see it;
        upkeep of earlier turns is not applied afterwards."""
        ...
