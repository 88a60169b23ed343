"""In-memory fakes of the ports that have no in-process adapter, for unit tests: no I/O, assert
on final state. The ports that have one (memory, event log, task control, presence, embedding
cache) are tested over it: see tests/doubles.py."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable, Coroutine, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from application.errors import (
    Conflict,
    ModelError,
    StoreUnavailable,
)
from application.ports.chat_model import ModelChunk
from application.ports.chat_models import ModelProfile
from domain.agents.agent import PLATFORM_OWNER, Agent, AgentDraft, AgentStatus, AgentVersion
from domain.agents.config import AgentConfig, ModelCapabilities, ModelParams
from domain.conversations.messages import Msg
from domain.ids import AppId, OwnerId, TaskId
from domain.knowledge.datasets import Chunk, Dataset, Document, DocumentStatus, PendingDocument, ScoredChunk, cosine
from domain.tools.calls import ToolCall, ToolSpec

if TYPE_CHECKING:
    from application.ports.chat_model import ChatModel
    from domain.accounts.keys import ApiKey, ApiKeyId
    from domain.memory.summary import SummaryLimit
    from domain.memory.window import Exchange

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

    def advance(self, seconds: float) -> None:
        """Time passes: `FakeClock(step=0).monotonic` is the clock for an adapter's leases and expiries."""
        self._now += timedelta(seconds=seconds)
        self._mono += seconds


class SequentialIds:
    def __init__(self) -> None:
        self._n = 0

    def new_id(self) -> str:
        self._n += 1
        return f"id{self._n}"


class WordTokenizer:
    def count(self, text: str) -> int:
        return len(text.split())


class FakeSummarizer:
    """Joins the queries: `update` appends them to the old summary; `fail` raises ModelError."""

    def __init__(self) -> None:
        self.updates: list[tuple[str, list[str]]] = []
        self.condensed: list[list[str]] = []
        self.fail = False

    async def update(self, summary: str, exchanges: Sequence[Exchange], limit: SummaryLimit) -> str:
        if self.fail:
            raise ModelError("The summariser is down.")
        self.updates.append((summary, [e.message_id for e in exchanges]))
        return " ".join([summary, *(e.query for e in exchanges)]).strip()

    async def condense(self, exchanges: Sequence[Exchange], limit: SummaryLimit) -> str:
        if self.fail:
            raise ModelError("The summariser is down.")
        self.condensed.append([e.message_id for e in exchanges])
        return " ".join(e.query for e in exchanges)


class FakeEntityExtractor:
    """Answers `outputs[query]` when set (any payload, malformed ones too), else no entities."""

    def __init__(self, outputs: Mapping[str, object] | None = None) -> None:
        self.outputs = dict(outputs or {})
        self.seen: list[str] = []

    async def extract(self, exchange: Exchange) -> object:
        self.seen.append(exchange.query)
        return self.outputs.get(exchange.query, {"intent": "chat", "entities": []})


Reply = Sequence[ModelChunk] | Callable[[Sequence[Msg], Sequence[ToolSpec]], Sequence[ModelChunk]]


class ScriptedModel:
    """Plays one scripted reply per call and records what it was sent."""

    def __init__(self, replies: Sequence[Reply], capabilities: ModelCapabilities | None = None) -> None:
        self._replies = list(replies)
        self._capabilities = capabilities or ModelCapabilities(tool_call=True)
        self.calls: list[tuple[list[Msg], list[ToolSpec]]] = []
        self.params: list[ModelParams | None] = []
        self.closed = 0
        self.on_chunk: Callable[[int], Awaitable[None]] | None = None

    @property
    def name(self) -> str:
        return "scripted-fake"

    @property
    def capabilities(self) -> ModelCapabilities:
        return self._capabilities

    async def stream(
        self, messages: Sequence[Msg], tools: Sequence[ToolSpec], params: ModelParams | None = None
    ) -> AsyncGenerator[ModelChunk, None]:
        self.calls.append((list(messages), list(tools)))
        self.params.append(params)
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
    def __init__(self, tools: Mapping[str, ToolFn], sequential: Sequence[str] = ()) -> None:
        self._tools = dict(tools)
        self._sequential = set(sequential)
        self.invoked: list[ToolCall] = []

    def specs(self, names: Sequence[str]) -> list[ToolSpec]:
        return [ToolSpec(n, f"the {n} tool", sequential=n in self._sequential) for n in names if n in self._tools]

    async def invoke(self, call: ToolCall) -> str:
        self.invoked.append(call)
        return await self._tools[call.name](call.arguments)


class CollectingSpawner:
    """Keeps spawned turns so a test can run them to the end when it chooses."""

    def __init__(self) -> None:
        self.work: list[Coroutine[Any, Any, None]] = []
        self.spawned: list[TaskId] = []

    def spawn(self, task_id: TaskId, work: Coroutine[Any, Any, None]) -> None:
        self.work.append(work)
        self.spawned.append(task_id)

    def is_running(self, task_id: TaskId) -> bool:
        return task_id in self.spawned and bool(self.work)

    async def run_all(self) -> None:
        while self.work:
            await self.work.pop(0)


class FakeAgentStore:
    """Agents and versions in dicts, with the port's compare-and-set rules."""

    def __init__(self) -> None:
        self.agents: dict[AppId, Agent] = {}
        self.versions: dict[tuple[AppId, int], AgentVersion] = {}

    @classmethod
    def publishing(cls, config: AgentConfig, owner: OwnerId = PLATFORM_OWNER) -> FakeAgentStore:
        """A store holding one agent (`config.app_id`) published once with `config`."""
        store = cls()
        draft = AgentDraft(1, config, T0)
        store.agents[config.app_id] = Agent(config.app_id, owner, str(config.app_id), "", AgentStatus.ACTIVE, draft,
                                            1, None, T0, T0)
        store.versions[(config.app_id, 1)] = AgentVersion(config.app_id, 1, "", config, T0)
        return store

    async def add_agent(self, agent: Agent) -> None:
        if agent.id in self.agents:
            raise Conflict(f"Agent {agent.id!r} exists.")
        self.agents[agent.id] = agent

    async def get_agent(self, agent_id: AppId) -> Agent | None:
        return self.agents.get(agent_id)

    async def list_agents(self, owner: OwnerId) -> list[Agent]:
        return sorted((a for a in self.agents.values() if a.owner == owner), key=lambda a: a.created_at, reverse=True)

    async def update_agent(self, agent: Agent, read: Agent) -> bool:
        current = self.agents[agent.id]
        was = (read.status, read.pinned_version, read.latest_version)
        if (current.status, current.pinned_version, current.latest_version) != was:
            return False
        self.agents[agent.id] = replace(current, name=agent.name, description=agent.description, status=agent.status,
                                        pinned_version=agent.pinned_version, updated_at=agent.updated_at)
        return True

    async def save_draft(self, agent: Agent, expected_revision: int) -> bool:
        current = self.agents[agent.id]
        if current.draft.revision != expected_revision:
            return False
        self.agents[agent.id] = replace(current, draft=agent.draft, updated_at=agent.updated_at)
        return True

    async def publish(self, agent: Agent, version: AgentVersion) -> bool:
        current = self.agents[agent.id]
        if current.latest_version != version.version - 1:
            return False
        self.versions[(agent.id, version.version)] = version
        self.agents[agent.id] = replace(current, latest_version=version.version, pinned_version=agent.pinned_version,
                                        updated_at=agent.updated_at)
        return True

    async def get_version(self, agent_id: AppId, version: int) -> AgentVersion | None:
        return self.versions.get((agent_id, version))

    async def list_versions(self, agent_id: AppId) -> list[AgentVersion]:
        return sorted((v for (a, _), v in self.versions.items() if a == agent_id), key=lambda v: -v.version)


class FakeChatModels:
    """Model profiles by name; `default` first."""

    def __init__(self, **models: ChatModel) -> None:
        self.models = models

    def profiles(self) -> list[ModelProfile]:
        return [ModelProfile(name, "fake", m.name, m.capabilities) for name, m in self.models.items()]

    def get(self, name: str) -> ChatModel | None:
        return self.models.get(name)


class FakeApiKeyStore:
    def __init__(self, *keys: ApiKey) -> None:
        self.keys: dict[str, ApiKey] = {k.id: k for k in keys}
        self.lookups = 0
        self.fail = False

    async def add(self, key: ApiKey) -> None:
        self._check()
        self.keys[key.id] = key

    async def find_by_hash(self, key_hash: str) -> ApiKey | None:
        self._check()
        self.lookups += 1
        return next((k for k in self.keys.values() if k.key_hash == key_hash), None)

    async def list_keys(self, owner: OwnerId | None = None, *, agent_id: AppId | None = None) -> list[ApiKey]:
        self._check()
        found = [
            k for k in self.keys.values()
            if (owner is None or k.owner == owner) and (agent_id is None or k.agent_id == agent_id)
        ]
        return sorted(found, key=lambda k: (k.created_at, k.id))

    async def revoke(self, key_id: ApiKeyId, at: datetime) -> ApiKey | None:
        self._check()
        key = self.keys.get(key_id)
        if key is not None:
            self.keys[key_id] = key = key.revoke(at)
        return key

    def _check(self) -> None:
        if self.fail:
            raise StoreUnavailable("The database is unavailable.")


class CountingSecrets:
    """Distinct, well-formed secrets: `secret-0000…1`, `secret-0000…2`, …"""

    def __init__(self) -> None:
        self._n = 0

    def new_secret(self) -> str:
        self._n += 1
        return f"secret-{self._n:036d}"


class FakeEmbedder:
    """Bag-of-letters vectors: texts sharing letters are similar; enough to rank in tests."""

    name = "fake-letters"

    def __init__(self) -> None:
        self.embedded: list[str] = []

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.embedded.extend(texts)
        return [[float(t.lower().count(c)) for c in "abcdefghijklmnopqrstuvwxyz"] for t in texts]


class FakeKnowledgeBase:
    def __init__(self) -> None:
        self.datasets: dict[str, Dataset] = {}
        self.chunks: list[tuple[Chunk, list[float]]] = []

    async def add_dataset(self, dataset: Dataset) -> None:
        self.datasets[dataset.id] = dataset

    async def get_dataset(self, dataset_id: str, owner: OwnerId) -> Dataset | None:
        found = self.datasets.get(dataset_id)
        return found if found is not None and found.owner == owner else None

    async def list_datasets(self, owner: OwnerId, offset: int, limit: int) -> list[Dataset]:
        mine = sorted((d for d in self.datasets.values() if d.owner == owner), key=lambda d: d.id)
        mine.sort(key=lambda d: d.created_at, reverse=True)  # stable: ties stay by id
        return mine[offset:offset + limit]

    async def add_chunks(self, chunks: Sequence[Chunk], vectors: Sequence[Sequence[float]]) -> None:
        self.chunks.extend((c, list(v)) for c, v in zip(chunks, vectors, strict=True))

    async def search(
        self, owner: OwnerId, dataset_ids: Sequence[str], vector: Sequence[float], top_k: int, min_score: float
    ) -> list[ScoredChunk]:
        mine = {d for d in dataset_ids if d in self.datasets and self.datasets[d].owner == owner}
        scored = [ScoredChunk(c, cosine(vector, v)) for c, v in self.chunks if c.dataset_id in mine]
        return sorted((s for s in scored if s.score >= min_score), key=lambda s: -s.score)[:top_k]


class FakeDocumentIntake:
    """Documents waiting for ingestion, in dicts; completing one adds its chunks to `knowledge`."""

    def __init__(self, knowledge: FakeKnowledgeBase) -> None:
        self.knowledge = knowledge
        self.documents: dict[str, Document] = {}
        self.texts: dict[str, str] = {}

    async def add_pending(self, pending: PendingDocument, at: datetime) -> None:
        self.documents[pending.document.id] = pending.document
        self.texts[pending.document.id] = pending.text

    async def pending(self, document_id: str) -> PendingDocument | None:
        found = self.documents.get(document_id)
        if found is None or found.status is not DocumentStatus.INDEXING:
            return None
        return PendingDocument(found, self.texts[document_id])

    async def complete(self, document_id: str, chunks: Sequence[Chunk], vectors: Sequence[Sequence[float]]) -> bool:
        if await self.pending(document_id) is None:
            return False
        await self.knowledge.add_chunks(chunks, vectors)
        self.documents[document_id] = replace(self.documents[document_id], chunks=len(chunks),
                                              status=DocumentStatus.READY)
        del self.texts[document_id]
        return True

    async def fail(self, document_id: str, error: str) -> None:
        if await self.pending(document_id) is not None:
            self.documents[document_id] = replace(self.documents[document_id], status=DocumentStatus.FAILED,
                                                  error=error)

    async def get_document(self, dataset_id: str, document_id: str, owner: OwnerId) -> Document | None:
        found = self.documents.get(document_id)
        dataset = self.knowledge.datasets.get(dataset_id)
        if found is None or found.dataset_id != dataset_id or dataset is None or dataset.owner != owner:
            return None
        return found
