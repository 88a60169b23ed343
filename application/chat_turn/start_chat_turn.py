"""StartChatTurn: validate, persist the query first, then run the turn in the background."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol

from application.chat_turn.turn import ChatRequest, Turn, TurnHandle
from application.errors import ApplicationError, Conflict, Forbidden, InvalidInput, NotFound
from application.ports.conversation_reader import ConversationReader
from application.ports.turn_record import TurnRecord
from domain.conversations.conversation import Conversation, EntryPoint, Message, MessageStatus, TurnOutcome
from domain.conversations.messages import Usage
from domain.ids import DEFAULT_AGENT, AppId, ConversationId, EndUserId, MessageId, OwnerId, TaskId
from domain.text import text_problem

if TYPE_CHECKING:
    from application.agents.resolve_config import ResolveConfig, ResolvedConfig
    from application.chat_turn.launch_turn import LaunchTurn
    from application.chat_turn.turn_quota import Admission, TurnQuota
    from application.model_calls.budgets import CheckBudgets
    from application.ports.runtime import Clock, IdGenerator


class _Store(TurnRecord, ConversationReader, Protocol):
    """The record a turn opens in (and closes in, when it cannot start), and its conversation is read from."""


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
        store: _Store,
        resolve: ResolveConfig,
        launch: LaunchTurn,
        clock: Clock,
        ids: IdGenerator,
        limits: InputLimits,
        quota: TurnQuota,
        budgets: CheckBudgets | None = None,
    ) -> None:
        self._store = store
        self._resolve = resolve
        self._launch = launch
        self._clock = clock
        self._ids = ids
        self._limits = limits
        self._quota = quota
        self._budgets = budgets  # None: no budgets (application/model_calls/budgets.py)
        # A conversation's agent, kind and end user never change: known once, they cost no read.
        self._known: OrderedDict[tuple[OwnerId, ConversationId], Conversation] = OrderedDict()

    async def __call__(self, request: ChatRequest) -> TurnHandle:
        self._validate(request)
        agent_id, speaker = await self._agent_of(request)
        resolved = await self._resolve(agent_id, request.owner, request.entry, request.version)
        new = self._new_conversation(request, resolved.agent_id, speaker)
        now = self._clock.now()
        message = Message(
            id=MessageId(self._ids.new_id()),
            conversation_id=new.id if new else ConversationId(str(request.conversation_id)),
            owner=request.owner, task_id=TaskId(self._ids.new_id()), query=request.query,
            created_at=now, updated_at=now, image_urls=request.image_urls,
            agent_version=resolved.version, draft_revision=resolved.draft_revision, entry_point=request.entry.value,
            end_user=speaker, agent_id=resolved.agent_id, parent_message_id=request.parent_message_id,
        )
        admission = await self._admit(request, message, resolved)
        try:
            return await self._open(request, message, new, resolved, admission)
        except BaseException:
            await admission.end()  # the turn never ran: its slots are free at once
            raise

    async def _admit(self, request: ChatRequest, message: Message, resolved: ResolvedConfig) -> Admission:
        """Refused like invalid input, before the query is stored: its budget reservation, then its
        rate limits (turn_quota.py, application/model_calls/budgets.py)."""
        budget = None
        if self._budgets is not None:
            budget = await self._budgets.for_turn(
                request.owner, resolved.agent_id, resolved.config, request.query, message.task_id
            )
        try:
            admission = await self._quota.admit(
                request.key_id, request.owner, message.task_id, resolved.agent_id, resolved.config.limits
            )
        except BaseException:
            if budget is not None:
                await budget.end(None)  # refused: it spent nothing
            raise
        return admission.reserving(budget)

    async def _open(
        self, request: ChatRequest, message: Message, new: Conversation | None, resolved: ResolvedConfig,
        admission: Admission,
    ) -> TurnHandle:
        conversation = await self._store.open_turn(message, new)
        if conversation is None:
            raise NotFound(f"Conversation {request.conversation_id!r} was not found.")
        config = resolved.config.for_call(request.model_params, request.system)
        if request.entry is EntryPoint.OPENAI:
            # An OpenAI client keeps what streamed as the answer and resends it: only the answer may
            # stream, or its history would never match the stored turns (domain.conversations.chat_completions).
            config = replace(config, stream_thoughts=False)
        turn = Turn(config, conversation, message, request.replaces, admission, request.output, request.client_tools,
                    request.earlier)
        try:
            await self._launch(turn)
        except ApplicationError as failure:
            await self._store.finish_message(self._failed(message, failure.message), [])
            raise
        return turn.handle

    async def _agent_of(self, request: ChatRequest) -> tuple[AppId, EndUserId]:
        """The agent the turn runs and whose turn it is; an existing conversation keeps to its own
        agent, kind and end user, and only its viewers may add to it."""
        viewer = request.viewer
        if request.key_agent is not None and request.agent_id not in (None, request.key_agent):
            raise Forbidden(f"This key is bound to agent {request.key_agent!r}; it cannot chat with another agent.")
        wanted = request.key_agent or request.agent_id
        if request.conversation_id is None:
            return wanted or DEFAULT_AGENT, viewer.speaker
        conversation = self._known.get((request.owner, request.conversation_id))
        if conversation is None:
            conversation = await self._store.get_conversation(request.conversation_id, request.owner)
            if conversation is None:
                raise NotFound(f"Conversation {request.conversation_id!r} was not found.")
            self._remember(conversation)
        if not viewer.sees(conversation):
            raise NotFound(f"Conversation {request.conversation_id!r} was not found.")
        # A well-formed request naming a conversation that exists but cannot go on here: a
        # conflict with that conversation, as a client sees it, not a malformed value.
        if wanted is not None and wanted != conversation.app_id:
            raise Conflict(f"Conversation {request.conversation_id!r} belongs to agent {conversation.app_id!r}.")
        if conversation.is_debug != (request.entry is EntryPoint.DEBUGGER):
            kind = "a debugger" if conversation.is_debug else "a published agent's"
            raise Conflict(f"Conversation {request.conversation_id!r} is {kind} conversation.")
        return conversation.app_id, conversation.end_user

    def _remember(self, conversation: Conversation) -> None:
        self._known[(conversation.owner, conversation.id)] = conversation
        if len(self._known) > CACHED_CONVERSATIONS:
            self._known.popitem(last=False)

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

    def _new_conversation(self, request: ChatRequest, agent_id: AppId, speaker: EndUserId) -> Conversation | None:
        if request.conversation_id is not None:
            return None
        now = self._clock.now()
        conversation = Conversation(
            id=request.new_conversation_id or ConversationId(self._ids.new_id()), app_id=agent_id, owner=request.owner,
            created_at=now, updated_at=now, is_debug=request.entry is EntryPoint.DEBUGGER, end_user=speaker,
            history_prefix=request.history_prefix,
        )
        self._remember(conversation)
        return conversation

    def _failed(self, message: Message, reason: str) -> Message:
        outcome = TurnOutcome("", MessageStatus.ERROR, Usage(), 0.0, error=reason)
        return message.finish(outcome, self._clock.now())
