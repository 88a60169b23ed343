from __future__ import annotations

from collections.abc import Sequence

from application.ports.memory_store import MemoryStore
from domain.ids import ConversationId
from domain.messages import Msg


class InProcessMemoryStore(MemoryStore):
    """Memory in this process's dicts: for one server process (the embedded default)."""

    def __init__(self) -> None:
        self._windows: dict[ConversationId, list[Msg]] = {}

    async def get_window(self, conversation_id: ConversationId) -> list[Msg] | None:
        window = self._windows.get(conversation_id)
        return list(window) if window is not None else None

    async def save_window(self, conversation_id: ConversationId, window: Sequence[Msg]) -> None:
        self._windows[conversation_id] = list(window)

    async def forget(self, conversation_id: ConversationId) -> None:
        self._windows.pop(conversation_id, None)
