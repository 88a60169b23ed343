from dataclasses import dataclass
from typing import Protocol

from domain.accounts.viewers import Viewer
from domain.conversations.conversation import Message
from domain.ids import AppId, ConversationId, EndUserId, MessageId, OwnerId, TaskId


@dataclass(frozen=True, slots=True)
class TaskInfo:
    task_id: TaskId
    owner: OwnerId
    conversation_id: ConversationId
    message_id: MessageId
    end_user: EndUserId = EndUserId("")  # "": the account itself
    agent_id: AppId = AppId("")

    @classmethod
    def of(cls, message: Message) -> "TaskInfo":
        return cls(
            message.task_id, message.owner, message.conversation_id, message.id, message.end_user, message.agent_id
        )

    def visible_to(self, viewer: Viewer) -> bool:
        """Whether the viewer may follow or stop the task: as for its message."""
        return (
            self.owner == viewer.owner
            and (viewer.end_user is None or self.end_user == viewer.end_user)
            and (viewer.agent_id is None or self.agent_id == viewer.agent_id)
        )


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
