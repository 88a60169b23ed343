"""In-memory fakes of our own ports, for unit tests: no I/O, assert on final state."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable, Coroutine, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from application.errors import Conflict, StoreUnavailable
from application.ports.chat_model import ModelChunk
from application.ports.event_log import LoggedEvent
from application.ports.task_control import TaskInfo
from domain.agent import AgentConfig, ModelCapabilities
from domain.conversation import Conversation, Message, MessageAgentThought, MessageStatus
from domain.ids import AppId, ConversationId, MessageId, OwnerId, TaskId
from domain.messages import Msg
from domain.thoughts import AgentThought
from domain.tools import ToolCall, ToolSpec

T0 = datetime(2026, 1, 1, tzinfo=UTC)


class FakeClock:
    def __init__(self, start: datetime = T0, step: float = 0.001) -> None:
        self._now, self._mono, self._step = start, 0.0, step

    def now(self) -> datetime:
        self._now += timedelta(seconds=self._step)
        return self._now

    def monotonic(self) -> float:
        self._mono += self._step
        return self._mono


class SequentialIds:
    def __init__(self) -> None:
        self._n = 0

    def new_id(self) -> str:
        self._n += 1
        return f"id{self._n}"


class WordTokenizer:
    def count(self, text: str) -> int:
        return len(text.split())


class FakeMessageStore:
    def __init__(self) -> None:
        self.conversations: dict[str, Conversation] = {}
        self.messages: dict[str, Message] = {}
        self.steps: dict[str, list[MessageAgentThought]] = {}
        self.fail_finish = False

    async def get_conversation(self, conversation_id: ConversationId, owner: OwnerId) -> Conversation | None:
        found = self.conversations.get(conversation_id)
        return found if found is not None and found.is_visible_to(owner) else None

    async def open_turn(self, message: Message, new_conversation: Conversation | None) -> Conversation | None:
        if new_conversation is not None:
            self.conversations[new_conversation.id] = new_conversation
        conversation = await self.get_conversation(message.conversation_id, message.owner)
        if conversation is None:
            return None
        if any(m.status is MessageStatus.RUNNING for m in self._of(conversation.id)):
            raise Conflict(f"Conversation {conversation.id!r} already has a turn running.")
        self.messages[message.id] = message
        return conversation

    async def finish_message(self, message: Message, steps: Sequence[MessageAgentThought]) -> None:
        if self.fail_finish:
            raise StoreUnavailable("The database is unavailable.")
        self.messages[message.id] = message
        self.steps[message.id] = list(steps)

    async def save_summary(self, conversation: Conversation) -> None:
        self.conversations[conversation.id] = conversation

    async def get_message(self, message_id: MessageId, owner: OwnerId) -> Message | None:
        found = self.messages.get(message_id)
        return found if found is not None and found.owner == owner else None

    async def recent_messages(self, conversation_id: ConversationId, limit: int) -> list[Message]:
        done = [m for m in self._of(conversation_id) if m.is_completed_turn]
        return done[-limit:] if limit else []

    async def list_messages(self, conversation_id: ConversationId, offset: int, limit: int) -> list[Message]:
        return self._of(conversation_id)[offset : offset + limit]

    async def list_steps(self, message_id: MessageId) -> list[MessageAgentThought]:
        return sorted(self.steps.get(message_id, []), key=lambda s: s.position)

    def _of(self, conversation_id: ConversationId) -> list[Message]:
        return sorted((m for m in self.messages.values() if m.conversation_id == conversation_id),
                      key=lambda m: m.created_at)


class FakeMemoryStore:
    def __init__(self) -> None:
        self.windows: dict[str, list[Msg]] = {}

    async def get_window(self, conversation_id: ConversationId) -> list[Msg] | None:
        return list(self.windows[conversation_id]) if conversation_id in self.windows else None

    async def save_window(self, conversation_id: ConversationId, window: Sequence[Msg]) -> None:
        self.windows[conversation_id] = list(window)

    async def forget(self, conversation_id: ConversationId) -> None:
        self.windows.pop(conversation_id, None)


class FakeEventLog:
    def __init__(self) -> None:
        self.logs: dict[str, list[LoggedEvent]] = {}
        self.closed: dict[str, float] = {}

    async def append(self, task_id: TaskId, thought: AgentThought) -> int:
        log = self.logs.setdefault(task_id, [])
        log.append(LoggedEvent(len(log) + 1, thought))
        return len(log)

    async def read(self, task_id: TaskId, after: int, wait: float) -> list[LoggedEvent]:
        return self.logs.get(task_id, [])[after:]

    async def close(self, task_id: TaskId, retention: float) -> None:
        self.closed[task_id] = retention

    def events(self, task_id: str) -> list[AgentThought]:
        return [e.thought for e in self.logs.get(task_id, [])]


class FakeTaskControl:
    def __init__(self) -> None:
        self.tasks: dict[str, TaskInfo] = {}
        self.stops: set[str] = set()

    async def register(self, info: TaskInfo, ttl: float) -> None:
        self.tasks[info.task_id] = info

    async def get(self, task_id: TaskId) -> TaskInfo | None:
        return self.tasks.get(task_id)

    async def request_stop(self, task_id: TaskId, owner: OwnerId) -> bool:
        info = self.tasks.get(task_id)
        if info is None or info.owner != owner:
            return False
        self.stops.add(task_id)
        return True

    async def stop_requested(self, task_id: TaskId) -> bool:
        return task_id in self.stops


Reply = Sequence[ModelChunk] | Callable[[Sequence[Msg], Sequence[ToolSpec]], Sequence[ModelChunk]]


class ScriptedModel:
    """Plays one scripted reply per call and records what it was sent."""

    def __init__(self, replies: Sequence[Reply], capabilities: ModelCapabilities | None = None) -> None:
        self._replies = list(replies)
        self._capabilities = capabilities or ModelCapabilities(tool_call=True)
        self.calls: list[tuple[list[Msg], list[ToolSpec]]] = []
        self.closed = 0
        self.on_chunk: Callable[[int], Awaitable[None]] | None = None

    @property
    def name(self) -> str:
        return "scripted-fake"

    @property
    def capabilities(self) -> ModelCapabilities:
        return self._capabilities

    async def stream(
        self, messages: Sequence[Msg], tools: Sequence[ToolSpec]
    ) -> AsyncGenerator[ModelChunk, None]:
        self.calls.append((list(messages), list(tools)))
        reply = self._replies.pop(0) if self._replies else [ModelChunk(text="ok")]
        chunks = reply(messages, tools) if callable(reply) else reply
        try:
            for index, chunk in enumerate(chunks):
                if self.on_chunk is not None:
                    await self.on_chunk(index)
                yield chunk
        finally:
            self.closed += 1


ToolFn = Callable[[Mapping[str, Any]], Awaitable[str]]


class FakeToolBox:
    def __init__(self, tools: Mapping[str, ToolFn]) -> None:
        self._tools = dict(tools)
        self.invoked: list[ToolCall] = []

    def specs(self, names: Sequence[str]) -> list[ToolSpec]:
        return [ToolSpec(n, f"the {n} tool") for n in names if n in self._tools]

    async def invoke(self, call: ToolCall) -> str:
        self.invoked.append(call)
        return await self._tools[call.name](call.arguments)


class CollectingSpawner:
    """Keeps spawned turns so a test can run them to the end when it chooses."""

    def __init__(self) -> None:
        self.work: list[Coroutine[Any, Any, None]] = []

    def spawn(self, task_id: TaskId, work: Coroutine[Any, Any, None]) -> None:
        self.work.append(work)

    async def run_all(self) -> None:
        while self.work:
            await self.work.pop(0)


class FakeAgentConfigs:
    def __init__(self, *configs: AgentConfig) -> None:
        self._configs = {c.app_id: c for c in configs} or {AppId("default"): AgentConfig(AppId("default"))}

    async def get(self, app_id: AppId, draft: bool) -> AgentConfig | None:
        return self._configs.get(app_id)
