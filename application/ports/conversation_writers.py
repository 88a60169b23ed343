"""What a completed turn asks of a model besides its answer: a title for its conversation, and the
questions the end user might ask next.

Adapters: over the ChatModel port, and offline ones for the offline scripted model. Both raise
`ModelError` when the model fails. What they return is untrusted text: the use cases clean it
(`application.conversations.name_conversation`, `suggest_follow_ups`). `language` is the agent's,
"en" or "zh".
"""

from collections.abc import Sequence
from typing import Protocol

from domain.memory.window import Exchange


class Titler(Protocol):
    async def title(self, exchange: Exchange, language: str) -> str:
        """A few words naming the conversation that opened with `exchange`."""
        ...


class FollowUpWriter(Protocol):
    async def follow_ups(self, exchange: Exchange, language: str, limit: int) -> Sequence[str]:
        """Up to `limit` short questions the end user might ask after `exchange`, as they would ask them."""
        ...
