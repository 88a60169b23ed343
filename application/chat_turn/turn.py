"""Values shared by the steps of one chat turn."""

from dataclasses import dataclass

from application.chat_turn.turn_quota import NO_LIMITS, Admission
from domain.accounts.viewers import Viewer
from domain.agents.config import AgentConfig, ModelParams
from domain.conversations.conversation import Conversation, EntryPoint, Message
from domain.conversations.structured_output import OutputFormat
from domain.ids import AppId, ConversationId, EndUserId, MessageId, OwnerId, TaskId
from domain.tools.client_tools import ClientTools, EarlierRound


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """One turn as an entry point asks for it. `agent_id` None: the platform's default agent;
    `version`: a published version pinned by the request (else the agent's active one).
    `end_user`: who chats (None: the account itself); `key_agent`: the agent an agent key is
    bound to; `parent_message_id`: the message this turn answers again (a regeneration)."""

    owner: OwnerId
    query: str
    conversation_id: ConversationId | None = None
    image_urls: tuple[str, ...] = ()
    agent_id: AppId | None = None
    version: int | None = None
    entry: EntryPoint = EntryPoint.API
    end_user: EndUserId | None = None
    key_agent: AppId | None = None
    parent_message_id: MessageId | None = None
    replaces: tuple[MessageId, ...] = ()  # the siblings a regeneration answers again, kept out of its window
    # One request's own sampling settings and system text (/v1): they change this turn's config only.
    model_params: ModelParams | None = None
    system: str = ""
    history_prefix: str = ""  # a new conversation's: the fingerprint of the history its client brought
    # The id a new conversation takes (conversation_id None), made by memagent before the turn for an
    # entry point that must name it first (A2A's contextId, application/chat_turn/context_conversation.py).
    new_conversation_id: ConversationId | None = None
    key_id: str | None = None  # the API key's id, whose rate limits the turn counts under (None: no key)
    output: OutputFormat | None = None  # the structured output the answer must be (/v1's `response_format`)
    client_tools: ClientTools | None = None  # the tools the request's client runs itself (/v1's `tools`)
    earlier: tuple[EarlierRound, ...] = ()  # tool rounds made elsewhere that the question comes with (/v1)

    @property
    def viewer(self) -> Viewer:
        return Viewer(self.owner, self.end_user, self.key_agent)


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
    replaces: tuple[MessageId, ...] = ()  # a regeneration's siblings: its window leaves them out
    admission: Admission = NO_LIMITS  # its hold on its rate-limit slots (turn_quota.py)
    output: OutputFormat | None = None  # the structured output its answer must be
    client_tools: ClientTools | None = None  # its client's own tools (domain.tools.client_tools)
    earlier: tuple[EarlierRound, ...] = ()  # tool rounds its question comes with, after it in the prompt

    @property
    def handle(self) -> TurnHandle:
        return TurnHandle(self.message.task_id, self.conversation.id, self.message.id)
