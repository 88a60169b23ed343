"""Values shared by the steps of one chat turn."""

from dataclasses import dataclass

from domain.agent import AgentConfig
from domain.agents import EntryPoint
from domain.conversation import Conversation, Message
from domain.ids import AppId, ConversationId, MessageId, OwnerId, TaskId


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """One turn as an entry point asks for it. `agent_id` None: the platform's default agent;
    `version`: a published version pinned by the request (else the agent's active one)."""

    owner: OwnerId
    query: str
    conversation_id: ConversationId | None = None
    image_urls: tuple[str, ...] = ()
    agent_id: AppId | None = None
    version: int | None = None
    entry: EntryPoint = EntryPoint.API


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
