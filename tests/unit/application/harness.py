"""Builds the chat-turn use cases over the fakes of tests/fakes.py."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from application.chat_turn.run_chat_turn import RunChatTurn, TurnLimits
from application.chat_turn.start_chat_turn import InputLimits, StartChatTurn
from application.chat_turn.turn import ChatRequest, TurnHandle
from application.chat_turn.turn_watch import WatchTimes
from application.knowledge.retrieval import Retrieval
from application.memory.cached_embedder import CachedEmbedder
from application.memory.memory_upkeep import MemoryUpkeep
from application.memory.recall_memory import MemoryRecall, ShortTermMemory
from application.tasks.follow_task import FollowTask, FollowTimes
from domain.agent import AgentConfig
from domain.ids import AppId, ConversationId, OwnerId
from domain.memory import MemoryPolicy
from domain.tools import RetryPolicy
from tests.fakes import (
    CollectingSpawner,
    FakeAgentConfigs,
    FakeClock,
    FakeEmbedder,
    FakeEmbeddingCache,
    FakeEntityExtractor,
    FakeEventLog,
    FakeKnowledgeBase,
    FakeMemoryStore,
    FakeMessageStore,
    FakePresence,
    FakeSummarizer,
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
        default_factory=lambda: TurnLimits(retry=RetryPolicy(2, 0.0), watch=WatchTimes(0.001))
    )
    store: FakeMessageStore = field(default_factory=FakeMessageStore)
    memory: FakeMemoryStore = field(default_factory=FakeMemoryStore)
    log: FakeEventLog = field(default_factory=FakeEventLog)
    tasks: FakeTaskControl = field(default_factory=FakeTaskControl)
    presence: FakePresence = field(default_factory=FakePresence)
    knowledge: FakeKnowledgeBase = field(default_factory=FakeKnowledgeBase)
    spawner: CollectingSpawner = field(default_factory=CollectingSpawner)
    # The long-term and entity tiers (recall and upkeep), off unless a test asks for them.
    memory_tiers: bool = False
    policy: MemoryPolicy = field(default_factory=MemoryPolicy)
    summarizer: FakeSummarizer = field(default_factory=FakeSummarizer)
    extractor: FakeEntityExtractor = field(default_factory=FakeEntityExtractor)
    embedder: FakeEmbedder = field(default_factory=FakeEmbedder)

    def __post_init__(self) -> None:
        clock, ids, tokenizer = FakeClock(), SequentialIds(), WordTokenizer()
        self.toolbox = FakeToolBox(self.tools)
        short_term = ShortTermMemory(self.store, self.memory, tokenizer, self.policy)
        self.short_term, self.clock = short_term, clock
        cached = CachedEmbedder(self.embedder, FakeEmbeddingCache())
        self.recall = MemoryRecall(self.memory, self.memory, cached, tokenizer, self.policy)
        self.upkeep = MemoryUpkeep(
            self.store, short_term, self.memory, self.memory, self.memory, self.summarizer, self.extractor,
            cached, self.spawner, clock, self.policy,
        )
        self.run_turn = RunChatTurn(
            self.store, short_term, self.log, self.tasks, self.presence, self.model, self.toolbox, tokenizer,
            clock, ids, self.limits, Retrieval(self.knowledge, FakeEmbedder()),
            self.recall if self.memory_tiers else None, self.upkeep if self.memory_tiers else None,
        )
        self.start = StartChatTurn(
            self.store, FakeAgentConfigs(self.config), self.tasks, self.log, self.run_turn, self.spawner,
            clock, ids, InputLimits(max_query_bytes=1024),
        )
        self.follow = FollowTask(self.tasks, self.log, self.presence, clock, FollowTimes(0.0, 30.0))

    async def turn(self, query: str, conversation_id: str | None = None) -> TurnHandle:
        """Start a turn and run it to its end."""
        handle = await self.start(
            ChatRequest(OWNER, query, ConversationId(conversation_id) if conversation_id else None)
        )
        await self.spawner.run_all()
        return handle

    def events(self, handle: TurnHandle) -> list[str]:
        return [t.event.value for t in self.log.events(handle.task_id)]
