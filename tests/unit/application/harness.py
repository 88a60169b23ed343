"""Builds the chat-turn use cases over the in-process adapters (tests/doubles.py) and the fakes of
tests/fakes.py."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import TypeVar

from application.agents.config_ran import ConfigRan
from application.agents.resolve_config import ResolveConfig
from application.chat_turn.after_turn import AfterTurn, TurnEnd
from application.chat_turn.agent_loop import AgentLoop
from application.chat_turn.client_tool_relay import ClientToolRelay
from application.chat_turn.launch_turn import LaunchTurn
from application.chat_turn.preparing_gate import PreparingGate
from application.chat_turn.queued_after_turn import QueuedAfterTurn
from application.chat_turn.run_chat_turn import RunChatTurn, TurnLimits
from application.chat_turn.save_outcome import SaveOutcome
from application.chat_turn.start_chat_turn import InputLimits, StartChatTurn
from application.chat_turn.tool_executor import ToolExecutor
from application.chat_turn.turn import ChatRequest, TurnHandle
from application.chat_turn.turn_events import TurnEvents
from application.chat_turn.turn_jobs import RunTurnJob
from application.chat_turn.turn_parts import TurnParts
from application.chat_turn.turn_quota import QuotaDefaults, TurnQuota
from application.chat_turn.turn_tools import TurnTools
from application.chat_turn.turn_watch import TurnWatch, WatchTimes
from application.conversations.name_conversation import NameConversation
from application.conversations.suggest_follow_ups import SuggestFollowUps
from application.knowledge.retrieval import Retrieval
from application.memory.cached_embedder import CachedEmbedder
from application.memory.digest_turns import DigestTurns
from application.memory.extract_entities import ExtractEntities
from application.memory.fold_archive import FoldArchive
from application.memory.long_term_recall import MemoryRecall, SummaryOnlyRecall
from application.memory.queued_upkeep import QueuedUpkeep
from application.memory.run_upkeep import MemoryUpkeep
from application.memory.schedule_upkeep import NoUpkeep, UpkeepScheduler
from application.memory.short_term_memory import ShortTermMemory
from application.ports.conversation_writers import FollowUpWriter, Titler
from application.ports.jobs import JobHandler
from application.ports.profile_work import OnProfile
from application.tasks.find_task import FindTask
from application.tasks.follow_task import FollowTask, FollowTimes
from domain.agents.config import AgentConfig
from domain.conversations.thoughts import AgentThought
from domain.ids import AppId, ConversationId, OwnerId, TaskId
from domain.memory.window import MemoryPolicy
from domain.tools.calls import RetryPolicy
from infrastructure.conversations.offline_writers import FirstWordsTitler, TemplateFollowUpWriter
from infrastructure.events.inprocess_client_tool_exchange import InProcessClientToolExchange
from infrastructure.events.inprocess_task_control import InProcessTaskControl
from infrastructure.events.inprocess_task_presence import InProcessTaskPresence
from infrastructure.jobs.inprocess_job_queue import InProcessJobQueue
from infrastructure.limits.inprocess_rate_limiter import InProcessRateLimiter
from infrastructure.memory.composed_digester import ComposedDigester
from infrastructure.memory.inprocess_memory_store import InProcessEmbeddingCache
from infrastructure.metrics.inprocess_metrics import InProcessMetrics
from infrastructure.runtime.system import AsyncioSpawner
from infrastructure.tools.jsonschema_check import JsonSchemaCheck
from tests.doubles import FailingEventLog, FailingMemoryStore
from tests.fake_message_store import FakeMessageStore
from tests.fakes import (
    CollectingSpawner,
    FakeAgentStore,
    FakeChatModels,
    FakeClock,
    FakeEmbedder,
    FakeEntityExtractor,
    FakeKnowledgeBase,
    FakeSummarizer,
    FakeToolBox,
    ScriptedModel,
    SequentialIds,
    ToolFn,
    WordTokenizer,
)

OWNER = OwnerId("alice")
T = TypeVar("T")


@dataclass
class Harness:
    model: ScriptedModel
    config: AgentConfig = field(default_factory=lambda: AgentConfig(AppId("default")))
    tools: Mapping[str, ToolFn] = field(default_factory=dict)
    sequential_tools: tuple[str, ...] = ()
    save_retry: float = 0.0  # seconds a save is retried while the store is unavailable
    limits: TurnLimits = field(
        default_factory=lambda: TurnLimits(retry=RetryPolicy(2, 0.0), watch=WatchTimes(0.001))
    )
    store: FakeMessageStore = field(default_factory=FakeMessageStore)
    memory: FailingMemoryStore = field(default_factory=FailingMemoryStore)
    log: FailingEventLog = field(default_factory=FailingEventLog)
    tasks: InProcessTaskControl = field(default_factory=InProcessTaskControl)
    # The leases of clients and workers lapse only when a test moves this clock on.
    time: FakeClock = field(default_factory=lambda: FakeClock(step=0))
    knowledge: FakeKnowledgeBase = field(default_factory=FakeKnowledgeBase)
    spawner: CollectingSpawner = field(default_factory=CollectingSpawner)
    # The long-term and entity tiers (recall and upkeep), off unless a test asks for them.
    memory_tiers: bool = False
    policy: MemoryPolicy = field(default_factory=MemoryPolicy)
    summarizer: FakeSummarizer = field(default_factory=FakeSummarizer)
    extractor: FakeEntityExtractor = field(default_factory=FakeEntityExtractor)
    embedder: FakeEmbedder = field(default_factory=FakeEmbedder)
    # Titles and follow-up questions run on a spawner of their own; `turn` waits for them. A
    # CollectingSpawner runs them only after the turn (its terminal event never waits for a title).
    titler: Titler = field(default_factory=FirstWordsTitler)
    follow_up_writer: FollowUpWriter = field(default_factory=TemplateFollowUpWriter)
    writers_spawner: CollectingSpawner | AsyncioSpawner = field(default_factory=AsyncioSpawner)
    title_wait: float = 0.0
    metrics: InProcessMetrics = field(default_factory=InProcessMetrics)
    # Rate limits (none by default) counted in process on the harness's own `time`.
    quotas: QuotaDefaults = field(default_factory=QuotaDefaults)
    limiter: InProcessRateLimiter = field(default_factory=InProcessRateLimiter)
    # Titles, follow-up questions and upkeep as jobs on an in-process queue (`jobs`), as job workers run them.
    queued_jobs: bool = False
    job_handler: JobHandler | None = None  # what the queue runs; RunTurnJob unless a test says otherwise
    preparing: PreparingGate = field(default_factory=PreparingGate)  # how many turns prepare at once (0: all)
    # Turns paused for their client's tools, and how long one waits for the results.
    client_tools: InProcessClientToolExchange = field(default_factory=InProcessClientToolExchange)
    client_tool_timeout: float = 5.0
    # Which model profile each piece of model work asked for, in order: (the work, the profile).
    profiles_asked: list[tuple[str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.presence = InProcessTaskPresence(clock=self.time.monotonic)
        clock, ids, tokenizer = FakeClock(), SequentialIds(), WordTokenizer()
        self.toolbox = FakeToolBox(self.tools, self.sequential_tools)
        short_term = ShortTermMemory(self.store, self.memory, tokenizer, self.policy)
        self.short_term, self.clock = short_term, clock
        cached = CachedEmbedder(self.embedder, InProcessEmbeddingCache())
        self.recall = MemoryRecall(self.memory, self.memory, cached, tokenizer, self.policy)
        self.fold = FoldArchive(short_term, self.memory, self.on_profile("archive", self.summarizer), clock,
                                self.policy)
        extract = ExtractEntities(self.on_profile("entities", self.extractor), self.memory, self.policy)
        digester = self.on_profile("digest", ComposedDigester(self.summarizer, self.extractor))
        self.upkeep = MemoryUpkeep(
            self.memory,
            extract,
            DigestTurns(self.store, self.memory, digester, extract, clock, self.policy),
            self.fold,
            self.policy,
        )
        self.scheduler = UpkeepScheduler(self.upkeep, self.spawner, clock)
        limits = self.limits
        # The turn's profile, and the memory's when the config names one: both are checked at a turn's start.
        models = FakeChatModels(**{self.config.upkeep_model: self.model, self.config.model: self.model})
        parts = TurnParts(
            models=models,
            metrics=self.metrics,
            new_events=partial(TurnEvents, log=self.log, tasks=self.tasks, clock=clock, ids=ids),
            new_tools=partial(TurnTools, toolbox=self.toolbox, retrieval=Retrieval(self.knowledge, FakeEmbedder())),
            new_executor=partial(ToolExecutor, policy=limits.retry, timeout=limits.tool_timeout, metrics=self.metrics),
            new_loop=partial(AgentLoop, tokenizer=tokenizer, ids=ids),
            new_watch=partial(TurnWatch, tasks=self.tasks, presence=self.presence, clock=clock, times=limits.watch),
            new_relay=partial(ClientToolRelay, exchange=self.client_tools, timeout=self.client_tool_timeout),
            schemas=JsonSchemaCheck(),
            preparing=self.preparing,
        )
        self.agents = FakeAgentStore.publishing(self.config)
        self.name_conversation = NameConversation(self.on_profile("title", self.titler), self.store, clock)
        self.suggest = SuggestFollowUps(self.on_profile("follow_ups", self.follow_up_writer), self.store,
                                        ConfigRan(self.agents))
        self.run_job = RunTurnJob(self.store, ConfigRan(self.agents), self.upkeep, self.name_conversation, self.suggest)
        self.jobs = InProcessJobQueue(self.job_handler or self.run_job, retries=2)
        if self.queued_jobs:
            self.scheduler = UpkeepScheduler(QueuedUpkeep(self.upkeep, self.jobs), self.spawner, clock)
        recall, upkeep = (self.recall, self.scheduler) if self.memory_tiers else (SummaryOnlyRecall(), NoUpkeep())
        after: TurnEnd = (
            QueuedAfterTurn(upkeep, self.jobs, self.store, self.title_wait) if self.queued_jobs
            else AfterTurn(upkeep, self.name_conversation, self.suggest, self.writers_spawner, self.title_wait)
        )
        self.run_turn = RunChatTurn(
            SaveOutcome(self.store, retry_for=self.save_retry), short_term, recall, after, parts, limits
        )
        resolve = ResolveConfig(self.agents, models)
        self.quota = TurnQuota(self.limiter, self.quotas, self.time, self.metrics)
        launch = LaunchTurn(self.tasks, self.log, self.run_turn, self.spawner, task_ttl=1800)
        self.start = StartChatTurn(
            self.store, resolve, launch, clock, ids, InputLimits(max_query_bytes=1024), self.quota
        )
        self.find = FindTask(self.tasks, self.store, task_ttl=1800)
        self.follow = FollowTask(
            self.find, self.tasks, self.log, self.presence, self.store, clock, FollowTimes(0.0, 30.0)
        )

    def on_profile(self, work: str, adapter: T) -> OnProfile[T]:
        """`adapter` on every profile, each profile asked for recorded in `profiles_asked`."""
        def on(profile: str, /) -> T:
            self.profiles_asked.append((work, profile))
            return adapter
        return on

    async def turn(self, query: str, conversation_id: str | None = None) -> TurnHandle:
        """Start a turn and run it to its end."""
        handle = await self.start(
            ChatRequest(OWNER, query, ConversationId(conversation_id) if conversation_id else None)
        )
        await self.spawner.run_all()
        await self.after_turns()
        return handle

    async def after_turns(self) -> None:
        """Until the titles and follow-up questions started so far are made."""
        await self.jobs.drain()
        if isinstance(self.writers_spawner, CollectingSpawner):
            await self.writers_spawner.run_all()
        else:
            await self.writers_spawner.drain(grace=30.0)

    async def thoughts(self, task_id: str) -> list[AgentThought]:
        """The task's events, as its log holds them."""
        return [logged.thought for logged in await self.log.read(TaskId(task_id), 0, 0)]

    async def events(self, handle: TurnHandle) -> list[str]:
        return [t.event.value for t in await self.thoughts(handle.task_id)]
