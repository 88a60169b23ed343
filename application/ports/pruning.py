"""What retention asks of the record: rows past their age, found and removed a bounded batch at a
time (each call is one transaction of at most `limit` rows), and a lock so that one prune runs at
a time across workers."""

from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from domain.ids import ConversationId, MessageId, TaskId
from domain.retention import Cutoffs, PruneCounts


@dataclass(frozen=True, slots=True)
class MessageRef:
    id: MessageId
    task_id: TaskId  # whose event log goes with the message


class PruneStore(Protocol):
    async def count(self, cutoffs: Cutoffs) -> PruneCounts:
        """What a prune with these cut-offs would remove now, kind by kind in the prune's order: a
        step that goes with its conversation, or whole, is not counted again under a later kind."""
        ...

    async def expired_conversations(self, deleted_before: datetime, limit: int) -> list[ConversationId]:
        """Conversations soft-deleted before the cut-off, oldest delete first."""
        ...

    async def delete_conversation_steps(self, conversation_id: ConversationId, limit: int) -> int:
        """Remove up to `limit` steps of the conversation's messages; how many went."""
        ...

    async def conversation_messages(self, conversation_id: ConversationId, limit: int) -> list[MessageRef]:
        """Up to `limit` of the conversation's messages."""
        ...

    async def delete_messages(self, message_ids: list[MessageId]) -> int:
        """Remove these messages (their steps are gone already); how many went."""
        ...

    async def delete_conversation(self, conversation_id: ConversationId, deleted_before: datetime) -> bool:
        """Remove the conversation's row, if it is still deleted before the cut-off and has no message left."""
        ...

    async def delete_steps(self, before: datetime, limit: int) -> int:
        """Remove up to `limit` steps created before the cut-off, oldest first."""
        ...

    async def empty_prompts(self, before: datetime, limit: int) -> int:
        """Empty the prompt snapshot of up to `limit` steps and messages created before the cut-off."""
        ...

    async def delete_model_calls(self, before: datetime, limit: int) -> int:
        """Remove up to `limit` rows of the model-call ledger made before the cut-off."""
        ...


class PruneLock(Protocol):
    def exclusive(self) -> AbstractAsyncContextManager[bool]:
        """Try to take the prune lock, without waiting: True while held here, False when another
        prune holds it. A holder that dies loses it."""
        ...
