"""Builds the chat-turn use cases over the fakes of tests/fakes.py."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from application.follow_task import FollowTask
from application.recall_memory import ShortTermMemory
from application.run_chat_turn import RunChatTurn, TurnLimits
from application.start_chat_turn import InputLimits, StartChatTurn
from application.turn import ChatRequest, TurnHandle
from domain.agent import AgentConfig
from domain.ids import AppId, ConversationId, OwnerId
from domain.tools import RetryPolicy
from tests.fakes import (
    CollectingSpawner,
    FakeAgentConfigs,
    FakeClock,
    FakeEventLog,
    FakeMemoryStore,
    FakeMessageStore,
    FakeTaskControl,
    FakeToolBox,
    ScriptedModel,
    SequentialIds,
    ToolFn,
    WordTokenizer,
)

OWNER = OwnerId("alice")


@dataclass
class Harness:
    model: ScriptedModel
    config: AgentConfig = field(default_factory=lambda: AgentConfig(AppId("default")))
    tools: Mapping[str, ToolFn] = field(default_factory=dict)
    limits: TurnLimits = field(
        default_factory=lambda: TurnLimits(stop_check_interval=0.0, retry=RetryPolicy(2, 0.0))
    )
    store: FakeMessageStore = field(default_factory=FakeMessageStore)
    memory: FakeMemoryStore = field(default_factory=FakeMemoryStore)
    log: FakeEventLog = field(default_factory=FakeEventLog)
    tasks: FakeTaskControl = field(default_factory=FakeTaskControl)
    spawner: CollectingSpawner = field(default_factory=CollectingSpawner)

    def __post_init__(self) -> None:
        clock, ids, tokenizer = FakeClock(), SequentialIds(), WordTokenizer()
        self.toolbox = FakeToolBox(self.tools)
        short_term = ShortTermMemory(self.store, self.memory, tokenizer)
        self.run_turn = RunChatTurn(
            self.store, short_term, self.log, self.tasks, self.model, self.toolbox, tokenizer,
            clock, ids, self.limits,
        )
        self.start = StartChatTurn(
            self.store, FakeAgentConfigs(self.config), self.tasks, self.run_turn, self.spawner,
            clock, ids, InputLimits(max_query_bytes=1024),
        )
        self.follow = FollowTask(self.tasks, self.log, idle_wait=0.0)

    async def turn(self, query: str, conversation_id: str | None = None) -> TurnHandle:
        """Start a turn and run it to its end."""
        handle = await self.start(
            ChatRequest(OWNER, query, ConversationId(conversation_id) if conversation_id else None)
        )
        await self.spawner.run_all()
        return handle

    def events(self, handle: TurnHandle) -> list[str]:
        return [t.event.value for t in self.log.events(handle.task_id)]
