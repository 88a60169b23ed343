from typing import Protocol

from domain.conversations.conversation import Message
from domain.ids import OwnerId, TaskId


class TaskMessages(Protocol):
    """The message a task answers, read from the durable record. A task's own record lives in a
    fast store that can lose it mid-turn (Redis flushed or restarted); the message cannot be lost.

    Raises `StoreUnavailable` when the database fails.
    """

    async def message_of_task(self, task_id: TaskId, owner: OwnerId) -> Message | None:
        """The message whose turn is `task_id`, if `owner` owns it and its conversation is not deleted."""
        ...
