from collections.abc import Sequence
from typing import Protocol

from domain.ids import ConversationId
from domain.messages import Msg


class MemoryStore(Protocol):
    """Fast memory beside the durable record; a miss is rebuilt from the MessageStore.

    Raises `MemoryUnavailable` when the backend fails.
    """

    async def get_window(self, conversation_id: ConversationId) -> list[Msg] | None:
        """The cached short-term window (user/assistant pairs), or None on a miss."""
        ...

    async def save_window(self, conversation_id: ConversationId, window: Sequence[Msg]) -> None: ...

    async def forget(self, conversation_id: ConversationId) -> None:
        """Drop everything kept for the conversation."""
        ...
