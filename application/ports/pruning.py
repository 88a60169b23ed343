"""What retention asks of the record: rows past their age, found and removed a bounded batch at a
time (each call is one transaction of at most `limit` rows), and a lock so that one prune runs at
a time across workers."""

from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, TypeAlias

from domain.ids import ConversationId, MessageId, TaskId
from domain.retention import Cutoffs, PruneCounts


@dataclass(frozen=True, slots=True)
class MessageRef:
    id: MessageId
    task_id: TaskId  # whose event log goes with the message


@dataclass(frozen=True, slots=True)
class RunsCalledIn:
    """The workflow runs that the tool calls of a conversation's messages started."""

    conversation_id: ConversationId


@dataclass(frozen=True, slots=True)
class DirectRunsBefore:
    """The workflow runs no turn called (no parent message) that started before the cut-off."""

    started_before: datetime


PrunedRuns: TypeAlias = RunsCalledIn | DirectRunsBefore


class ConversationPruning(Protocol):
    """Deleted conversations, removed whole: their steps, messages and row, and the count of all."""

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


class AgedRowPruning(Protocol):
    """Rows that go by their own age: steps, prompt snapshots, the ledger, workflow runs."""

    async def delete_steps(self, before: datetime, limit: int) -> int:
        """Remove up to `limit` steps created before the cut-off, oldest first."""
        ...

    async def empty_prompts(self, before: datetime, limit: int) -> int:
        """Empty the prompt snapshot of up to `limit` steps and messages created before the cut-off."""
        ...

    async def delete_model_calls(self, before: datetime, limit: int) -> int:
        """Remove up to `limit` rows of the model-call ledger made before the cut-off."""
        ...

    async def delete_node_runs(self, runs: PrunedRuns, limit: int) -> int:
        """Remove up to `limit` node runs of these workflow runs, the oldest run's first; how many went."""
        ...

    async def delete_workflow_runs(self, runs: PrunedRuns, limit: int) -> int:
        """Remove up to `limit` of these workflow runs that have no node run left, oldest first."""
        ...


class PruneStore(ConversationPruning, AgedRowPruning, Protocol):
    """Everything a prune removes (two roles, so that neither is wide)."""


class PruneLock(Protocol):
    def exclusive(self) -> AbstractAsyncContextManager[bool]:
        """Try to take the prune lock, without waiting: True while held here, False when another
        prune holds it. A holder that dies loses it."""
        ...
