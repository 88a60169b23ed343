from dataclasses import dataclass
from typing import Protocol

from domain.ids import ConversationId, MessageId, OwnerId, TaskId


@dataclass(frozen=True, slots=True)
class TaskInfo:
    task_id: TaskId
    owner: OwnerId
    conversation_id: ConversationId
    message_id: MessageId


class TaskControl(Protocol):
    """Who owns a running task, and whether someone asked it to stop.

    Raises `EventStoreUnavailable` when the backend fails.
    """

    async def register(self, info: TaskInfo, ttl: float) -> None: ...

    async def get(self, task_id: TaskId) -> TaskInfo | None: ...

    async def request_stop(self, task_id: TaskId, owner: OwnerId) -> bool:
        """Set the stop flag if `owner` owns the task; False when it does not (or is unknown)."""
        ...

    async def stop_requested(self, task_id: TaskId) -> bool: ...
