"""A turn in the durable record: its query opened, its outcome saved, and the turns left running.

Each method is one transaction. Raises `StoreUnavailable` when the database fails.
"""

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from domain.billing.model_calls import ModelCall
from domain.conversations.conversation import Conversation, Message, MessageAgentThought


class TurnRecord(Protocol):
    async def open_turn(self, message: Message, new_conversation: Conversation | None) -> Conversation | None:
        """Persist a turn's query in one transaction, and return its conversation as that left it.

        With `new_conversation`, both are created. Otherwise the message's conversation must
        exist, be visible to the message's owner, and have no turn running (else `Conflict`);
        None means it was not found, and nothing was written. A regeneration (a message with a
        `parent_message_id`) must answer the conversation's latest message, else `Conflict`.
        The conversation's activity time and message count move with the new message, in the
        conversation returned too.
        """
        ...

    async def finish_message(
        self, message: Message, steps: Sequence[MessageAgentThought], calls: Sequence[ModelCall] = ()
    ) -> None:
        """Persist a turn's outcome, all its steps and its own model calls (for the model-call
        ledger, `ModelCallLedger`) in one transaction.

        Only a running message can finish: otherwise (unknown, or already finished) `NotFound`.
        A regeneration that completes supersedes the siblings it answers again.
        """
        ...

    async def running_messages(self, created_before: datetime, limit: int) -> list[Message]:
        """Messages still running that were created before `created_before`, oldest first."""
        ...
