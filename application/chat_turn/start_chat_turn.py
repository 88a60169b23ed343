"""StartChatTurn: validate, persist the query first, then run the turn in the background."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING

from application.chat_turn.turn import ChatRequest, Turn, TurnHandle
from application.errors import ApplicationError, InvalidInput, NotFound
from domain.agents import DEFAULT_AGENT, EntryPoint
from domain.conversation import Conversation, Message, MessageStatus, TurnOutcome
from domain.ids import AppId, ConversationId, MessageId, OwnerId, TaskId
from domain.messages import Usage
from domain.text import text_problem

if TYPE_CHECKING:
    from application.agents.resolve_config import ResolveConfig
    from application.chat_turn.launch_turn import LaunchTurn
    from application.ports.message_store import MessageStore
    from application.ports.runtime import Clock, IdGenerator


@dataclass(frozen=True, slots=True)
class InputLimits:
    max_query_bytes: int = 32 * 1024
    max_images: int = 8


CACHED_CONVERSATIONS = 10_000


class StartChatTurn:
    """The turn's config is resolved once, here: from the request's agent (the default agent when
    it names none), or for an existing conversation from the agent it belongs to. A debugger turn
    runs the draft and keeps to debug conversations; the others keep to published ones."""

    def __init__(
        self,
        store: MessageStore,
        resolve: ResolveConfig,
        launch: LaunchTurn,
        clock: Clock,
        ids: IdGenerator,
        limits: InputLimits,
    ) -> None:
        self._store = store
        self._resolve = resolve
        self._launch = launch
        self._clock = clock
        self._ids = ids
        self._limits = limits
        # A conversation's agent and kind never change: known once, they cost no read.
        self._agents: OrderedDict[tuple[OwnerId, ConversationId], tuple[AppId, bool]] = OrderedDict()

    async def __call__(self, request: ChatRequest) -> TurnHandle:
        self._validate(request)
        agent_id = await self._agent_of(request)
        resolved = await self._resolve(agent_id, request.owner, request.entry, request.version)
        new = self._new_conversation(request, resolved.agent_id)
        now = self._clock.now()
        message = Message(
            id=MessageId(self._ids.new_id()),
            conversation_id=new.id if new else ConversationId(str(request.conversation_id)),
            owner=request.owner, task_id=TaskId(self._ids.new_id()), query=request.query,
            created_at=now, updated_at=now, image_urls=request.image_urls,
            agent_version=resolved.version, draft_revision=resolved.draft_revision, entry_point=request.entry.value,
        )
        conversation = await self._store.open_turn(message, new)
        if conversation is None:
            raise NotFound(f"Conversation {request.conversation_id!r} was not found.")
        turn = Turn(resolved.config, conversation, message)
        try:
            await self._launch(turn)
        except ApplicationError as failure:
            await self._store.finish_message(self._failed(message, failure.message), [])
            raise
        return turn.handle

    async def _agent_of(self, request: ChatRequest) -> AppId:
        """The agent the turn runs; an existing conversation keeps to its own agent and kind."""
        debug = request.entry is EntryPoint.DEBUGGER
        if request.conversation_id is None:
            return request.agent_id or DEFAULT_AGENT
        known = self._agents.get((request.owner, request.conversation_id))
        if known is None:
            conversation = await self._store.get_conversation(request.conversation_id, request.owner)
            if conversation is None:
                raise NotFound(f"Conversation {request.conversation_id!r} was not found.")
            known = self._remember(conversation, conversation.app_id)
        agent_id, is_debug = known
        if request.agent_id is not None and request.agent_id != agent_id:
            raise InvalidInput(f"Conversation {request.conversation_id!r} belongs to agent {agent_id!r}.")
        if is_debug != debug:
            kind = "a debugger" if is_debug else "a published agent's"
            raise InvalidInput(f"Conversation {request.conversation_id!r} is {kind} conversation.")
        return agent_id

    def _remember(self, conversation: Conversation, agent_id: AppId) -> tuple[AppId, bool]:
        self._agents[(conversation.owner, conversation.id)] = (agent_id, conversation.is_debug)
        if len(self._agents) > CACHED_CONVERSATIONS:
            self._agents.popitem(last=False)
        return agent_id, conversation.is_debug

    def _validate(self, request: ChatRequest) -> None:
        if not request.query.strip():
            raise InvalidInput("The query is empty.")
        problem = text_problem(request.query)
        if problem:
            raise InvalidInput(f"The query: {problem}.")
        size = len(request.query.encode("utf-8"))
        if size > self._limits.max_query_bytes:
            raise InvalidInput(f"The query is {size} bytes; the limit is {self._limits.max_query_bytes}.")
        if len(request.image_urls) > self._limits.max_images:
            raise InvalidInput(f"At most {self._limits.max_images} images per turn.")
        bad = [u for u in request.image_urls if not u.startswith(("https://", "http://", "data:image/"))]
        if bad:
            raise InvalidInput(f"Not an http(s) or data:image URL: {bad[0][:100]!r}.")

    def _new_conversation(self, request: ChatRequest, agent_id: AppId) -> Conversation | None:
        if request.conversation_id is not None:
            return None
        now = self._clock.now()
        conversation = Conversation(
            id=ConversationId(self._ids.new_id()), app_id=agent_id, owner=request.owner,
            created_at=now, updated_at=now, is_debug=request.entry is EntryPoint.DEBUGGER,
        )
        self._remember(conversation, agent_id)
        return conversation

    def _failed(self, message: Message, reason: str) -> Message:
        outcome = TurnOutcome("", MessageStatus.ERROR, Usage(), 0.0, error=reason)
        return message.finish(outcome, self._clock.now())
