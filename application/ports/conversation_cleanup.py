"""What deleting a conversation (or forgetting its end user) asks of memory: forget all it holds of it."""

from typing import Protocol

from domain.ids import ConversationId


class MemoryEraser(Protocol):
    async def erase(self, conversation_id: ConversationId) -> bool:
        """Forget the conversation's memory (window, archive, entities, in the record and the cache),
        whoever may still see it; upkeep of earlier turns is not applied afterwards. Whether a
        cached window was dropped."""
        ...
