"""The memory tiers, as a container of their own inside the main one (`Container.memory`):
the SQL record, the cache in front of it (in-process or Redis), recall, upkeep and the memory API's
use cases (docs/ARCHITECTURE.md §5)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dependency_injector import containers, providers

from application.memory.cached_embedder import CachedEmbedder
from application.memory.conversation_memory import ConversationMemory
from application.memory.digest_turns import DigestTurns
from application.memory.extract_entities import ExtractEntities
from application.memory.fold_archive import FoldArchive
from application.memory.index_memory import IndexMemory
from application.memory.long_term_recall import MemoryRecall
from application.memory.memory_queries import MemoryQueries
from application.memory.queued_upkeep import QueuedUpkeep
from application.memory.recorded_memory_store import RecordedMemoryStore
from application.memory.recorded_user_facts import RecordedUserFacts
from application.memory.run_upkeep import MemoryUpkeep
from application.memory.schedule_upkeep import UpkeepScheduler
from application.memory.short_term_memory import ShortTermMemory
from application.memory.upkeep_rule import UpkeepRule
from application.memory.user_memory import UserMemory
from application.memory.user_recall import UserRecall
from application.ports.model_metrics import ModelPurpose
from infrastructure.memory.composed_digester import ComposedDigester
from infrastructure.memory.extractive_summarizer import ExtractiveSummarizer
from infrastructure.memory.inprocess_memory_store import (
    InProcessEmbeddingCache,
    InProcessMemoryStore,
    InProcessUserFactCache,
)
from infrastructure.memory.llm_memory_digester import LLMMemoryDigester
from infrastructure.memory.llm_memory_models import LLMEntityExtractor, LLMSummarizer
from infrastructure.memory.redis_embedding_cache import RedisEmbeddingCache
from infrastructure.memory.redis_memory_store import RedisMemoryStore
from infrastructure.memory.redis_user_fact_cache import RedisUserFactCache
from infrastructure.memory.rule_entity_extractor import RuleBasedEntityExtractor
from infrastructure.models.profile_work import OnProfiles
from infrastructure.persistence.recall_matrices import RecallMatrices
from infrastructure.persistence.sqlalchemy_archive_index import SqlAlchemyArchiveIndex
from infrastructure.persistence.sqlalchemy_memory_record import SqlAlchemyMemoryRecord
from infrastructure.persistence.sqlalchemy_recall_index import SqlAlchemyRecallIndex
from interfaces.wiring.config_objects import memory_policy_of
from interfaces.wiring.rules import recall_reads_tiers_at_once, upkeep_rule_for

if TYPE_CHECKING:
    from application.model_calls.budgets import CheckBudgets
    from application.ports.chat_models import ChatModels
    from application.ports.embedder import Embedder
    from application.ports.jobs import JobQueue
    from application.ports.message_store import MessageStore
    from application.ports.runtime import Clock, TaskSpawner, Tokenizer
    from application.ports.tracing import Tracer
    from infrastructure.models.observed_models import ModelObserver
    from infrastructure.persistence.database import Database
    from infrastructure.redis_client import RedisClient


class MemoryContainer(containers.DeclarativeContainer):
    config = providers.Configuration()
    database: providers.Dependency[Database] = providers.Dependency()
    redis: providers.Dependency[RedisClient] = providers.Dependency()
    store: providers.Dependency[MessageStore] = providers.Dependency()
    tokenizer: providers.Dependency[Tokenizer] = providers.Dependency()
    clock: providers.Dependency[Clock] = providers.Dependency()
    spawner: providers.Dependency[TaskSpawner] = providers.Dependency()
    jobs: providers.Dependency[JobQueue] = providers.Dependency()
    embedder: providers.Dependency[Embedder] = providers.Dependency()
    models: providers.Dependency[ChatModels] = providers.Dependency()  # the model profiles' own
    tracer: providers.Dependency[Tracer] = providers.Dependency()
    observer: providers.Dependency[ModelObserver] = providers.Dependency()  # counts, bills, traces model calls
    budgets: providers.Dependency[CheckBudgets] = providers.Dependency()  # upkeep reserves against them

    policy = providers.Singleton(memory_policy_of, memory=config.memory)
    cache = providers.Selector(
        config.memory.backend,
        inprocess=providers.Singleton(InProcessMemoryStore, lock_wait=config.memory.upkeep_wait),
        redis=providers.Singleton(
            RedisMemoryStore, client=redis, window_ttl=config.memory.window_ttl, lock_lease=config.memory.upkeep_lease,
            lock_wait=config.memory.upkeep_wait,
        ),
    )
    record = providers.Singleton(SqlAlchemyMemoryRecord, database=database)
    # Stored vectors as matrices in process (one budget): a user's, and a conversation's own archive.
    matrices = providers.Singleton(RecallMatrices)
    recall_index = providers.Singleton(SqlAlchemyRecallIndex, database=database, matrices=matrices)
    archive_index = providers.Singleton(SqlAlchemyArchiveIndex, database=database, matrices=matrices)
    # Every tier with SQL as its record and the cache in front of it.
    memory_store = providers.Singleton(RecordedMemoryStore, cache=cache, record=record)
    user_fact_cache = providers.Selector(
        config.memory.backend,
        inprocess=providers.Singleton(InProcessUserFactCache),
        redis=providers.Singleton(RedisUserFactCache, client=redis, ttl=config.memory.window_ttl),
    )
    user_facts = providers.Singleton(RecordedUserFacts, cache=user_fact_cache, record=record)
    embedding_cache = providers.Selector(
        config.memory.backend,
        inprocess=providers.Singleton(
            InProcessEmbeddingCache, max_entries=config.memory.embedding_cache_size,
            ttl=config.memory.embedding_cache_ttl,
        ),
        redis=providers.Singleton(RedisEmbeddingCache, client=redis, ttl=config.memory.embedding_cache_ttl),
    )
    # An embedding model's vectors are cached; a lexical vector costs less to compute than a cache round trip.
    memory_embedder = providers.Selector(
        config.embeddings.backend,
        lexical=embedder,
        openai=providers.Singleton(CachedEmbedder, embedder=embedder, cache=embedding_cache),
        local=providers.Singleton(CachedEmbedder, embedder=embedder, cache=embedding_cache),
    )
    short_term = providers.Singleton(ShortTermMemory, store=store, memory=memory_store, tokenizer=tokenizer,
                                     policy=policy)
    # The memory tiers' model work, on each agent's memory profile (AgentConfig.upkeep_model): extractive and
    # rule-based on a scripted profile, else that profile's LLM, whose calls count by purpose and profile.
    offline_summarizer = providers.Singleton(ExtractiveSummarizer)
    offline_extractor = providers.Singleton(RuleBasedEntityExtractor)
    summarizer = providers.Singleton(
        OnProfiles, models=models, purpose=ModelPurpose.SUMMARY, offline=offline_summarizer,
        llm=providers.Object(LLMSummarizer), observer=observer,
    )
    entity_extractor = providers.Singleton(
        OnProfiles, models=models, purpose=ModelPurpose.ENTITIES, offline=offline_extractor,
        llm=providers.Object(LLMEntityExtractor), observer=observer,
    )
    # The upkeep's summary and entities: one call with an LLM (counted as a summary call), else the offline pair.
    digester = providers.Singleton(
        OnProfiles, models=models, purpose=ModelPurpose.SUMMARY,
        offline=providers.Singleton(ComposedDigester, summarizer=offline_summarizer, extractor=offline_extractor),
        llm=providers.Object(LLMMemoryDigester), observer=observer,
    )
    extract_entities = providers.Singleton(
        ExtractEntities, extractor=entity_extractor, entities=memory_store, policy=policy, facts=user_facts
    )
    user_recall = providers.Singleton(
        UserRecall, facts=user_facts, index=recall_index, embedder=memory_embedder,
        top_k=config.memory.cross_conversation_top_k,
    )
    recall = providers.Singleton(
        MemoryRecall, memory=memory_store, entities=memory_store, embedder=memory_embedder, tokenizer=tokenizer,
        policy=policy, user=user_recall, archive=archive_index,
        at_once=providers.Callable(recall_reads_tiers_at_once, database=database),
    )
    upkeep = providers.Singleton(
        MemoryUpkeep,
        ledger=memory_store,
        extract_entities=extract_entities,
        digest_turns=providers.Singleton(
            DigestTurns, store=store, ledger=memory_store, digester=digester, entities=extract_entities, clock=clock,
            policy=policy,
        ),
        fold_archive=providers.Singleton(
            FoldArchive, short_term=short_term, memory=memory_store, summarizer=summarizer,
            clock=clock, policy=policy,
        ),
        policy=policy,
        index_memory=providers.Singleton(IndexMemory, store=store, index=recall_index, embedder=memory_embedder),
        tracer=tracer, budgets=budgets,
    )
    lazy_upkeep = providers.Singleton(
        UpkeepRule, every_turns=config.memory.upkeep_every_turns, token_budget=config.memory.upkeep_token_budget,
        idle_seconds=config.memory.upkeep_idle_seconds,
    )
    upkeep_rule = providers.Callable(upkeep_rule_for, provider=config.llm["provider"], lazy=lazy_upkeep)
    # Who runs a due upkeep: this process, or (MEMAGENT_JOBS__BACKEND=redis) a job worker.
    upkeep_runner = providers.Selector(
        config.jobs.backend, inprocess=upkeep, redis=providers.Singleton(QueuedUpkeep, upkeep=upkeep, jobs=jobs),
    )
    upkeep_scheduler = providers.Singleton(
        UpkeepScheduler, upkeep=upkeep_runner, spawner=spawner, clock=clock, rule=upkeep_rule,
        count=tokenizer.provided.count,
    )
    conversation_memory = providers.Singleton(
        ConversationMemory, store=store, memory=memory_store, entities=memory_store, ledger=memory_store,
        clock=clock, policy=policy,
    )
    queries = providers.Singleton(MemoryQueries, store=store, embedder=embedder)
    user_memory = providers.Singleton(
        UserMemory, facts=user_facts, forgetting=user_facts, index=recall_index, embedder=memory_embedder, clock=clock,
        policy=policy,
    )
