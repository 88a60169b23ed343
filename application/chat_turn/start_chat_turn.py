"""StartChatTurn: validate, persist the query first, then run the turn in the background."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from application.chat_turn.turn import ChatRequest, Turn, TurnHandle
from application.errors import ApplicationError, InvalidInput, NotFound
from application.ports.task_control import TaskControl, TaskInfo
from domain.conversation import Conversation, Message, MessageStatus, TurnOutcome
from domain.ids import ConversationId, MessageId, TaskId
from domain.messages import Usage
from domain.text import text_problem

if TYPE_CHECKING:
    from application.chat_turn.run_chat_turn import RunChatTurn
    from application.ports.agents import AgentConfigs
    from application.ports.event_log import EventLog
    from application.ports.message_store import MessageStore
    from application.ports.runtime import Clock, IdGenerator, TaskSpawner


@dataclass(frozen=True, slots=True)
class InputLimits:
    max_query_bytes: int = 32 * 1024
    max_images: int = 8
    task_ttl: float = 1800.0


class StartChatTurn:
    def __init__(
        self,
        store: MessageStore,
        configs: AgentConfigs,
        tasks: TaskControl,
        events: EventLog,
        run_turn: RunChatTurn,
        spawner: TaskSpawner,
        clock: Clock,
        ids: IdGenerator,
        limits: InputLimits,
    ) -> None:
        self._store = store
        self._configs = configs
        self._tasks = tasks
        self._events = events
        self._run_turn = run_turn
        self._spawner = spawner
        self._clock = clock
        self._ids = ids
        self._limits = limits

    async def __call__(self, request: ChatRequest) -> TurnHandle:
        self._validate(request)
        config = await self._configs.get(request.app_id, request.draft)
        if config is None:
            raise NotFound(f"No agent named {request.app_id!r}.")
        new = self._new_conversation(request)
        now = self._clock.now()
        message = Message(
            id=MessageId(self._ids.new_id()),
            conversation_id=new.id if new else ConversationId(str(request.conversation_id)),
            owner=request.owner, task_id=TaskId(self._ids.new_id()), query=request.query,
            created_at=now, updated_at=now, image_urls=request.image_urls,
        )
        conversation = await self._store.open_turn(message, new)
        if conversation is None:
            raise NotFound(f"Conversation {request.conversation_id!r} was not found.")
        turn = Turn(config, conversation, message)
        try:
            await self._tasks.register(
                TaskInfo(message.task_id, request.owner, conversation.id, message.id), self._limits.task_ttl
            )
        except ApplicationError as failure:
            await self._store.finish_message(self._failed(message, failure.message), [])
            raise
        # Before the spawn, so that a follower here never asks the log's server for the first events.
        await self._events.open(message.task_id)
        self._spawner.spawn(message.task_id, self._run_turn(turn))
        return turn.handle

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

    def _new_conversation(self, request: ChatRequest) -> Conversation | None:
        if request.conversation_id is not None:
            return None
        now = self._clock.now()
        return Conversation(
            id=ConversationId(self._ids.new_id()), app_id=request.app_id, owner=request.owner,
            created_at=now, updated_at=now,
        )

    def _failed(self, message: Message, reason: str) -> Message:
        outcome = TurnOutcome("", MessageStatus.ERROR, Usage(), 0.0, error=reason)
        return message.finish(outcome, self._clock.now())
