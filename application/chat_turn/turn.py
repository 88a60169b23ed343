"""Values shared by the steps of one chat turn."""

from dataclasses import dataclass

from domain.agent import AgentConfig
from domain.conversation import Conversation, Message
from domain.ids import AppId, ConversationId, MessageId, OwnerId, TaskId


@dataclass(frozen=True, slots=True)
class ChatRequest:
    owner: OwnerId
    query: str
    conversation_id: ConversationId | None = None
    image_urls: tuple[str, ...] = ()
    app_id: AppId = AppId("default")
    draft: bool = False


@dataclass(frozen=True, slots=True)
class TurnHandle:
    task_id: TaskId
    conversation_id: ConversationId
    message_id: MessageId


@dataclass(frozen=True, slots=True)
class Turn:
    """Everything a running turn needs to know about itself."""

    config: AgentConfig
    conversation: Conversation
    message: Message

    @property
    def handle(self) -> TurnHandle:
        return TurnHandle(self.message.task_id, self.conversation.id, self.message.id)
