"""The one place that builds concrete objects. Backends are chosen by configuration.

Adapter constructors do no I/O (they connect on first use or in `start`), so building
a branch that is not selected costs nothing.
"""

from __future__ import annotations

from dependency_injector import containers, providers

from application.accounts.authenticate import Authenticate
from application.accounts.create_api_key import CreateApiKey
from application.accounts.list_api_keys import ListApiKeys
from application.accounts.revoke_api_key import RevokeApiKey
from application.chat_turn.run_chat_turn import RunChatTurn, TurnLimits
from application.chat_turn.start_chat_turn import InputLimits, StartChatTurn
from application.chat_turn.turn_watch import WatchTimes
from application.conversations.read_history import ReadHistory
from application.knowledge.add_document import AddDocument
from application.knowledge.create_dataset import CreateDataset
from application.knowledge.describe_dataset import DescribeDataset
from application.knowledge.documents import DocumentLimits
from application.knowledge.retrieval import Retrieval
from application.memory.cached_embedder import CachedEmbedder
from application.memory.conversation_memory import ConversationMemory
from application.memory.memory_queries import MemoryQueries
from application.memory.memory_upkeep import MemoryUpkeep
from application.memory.recall_memory import MemoryRecall, ShortTermMemory
from application.tasks.follow_task import FollowTask, FollowTimes
from application.tasks.stop_task import StopTask
from application.tasks.sweep_stale_turns import SweepStaleTurns
from domain.agent import AgentConfig
from domain.ids import AppId
from domain.memory import MemoryPolicy
from domain.memory_summary import SummaryLimit
from domain.review import KeywordReview
from domain.tools import RetryPolicy
from infrastructure.agents.static_agent_configs import StaticAgentConfigs
from infrastructure.embeddings.lexical import LexicalEmbedder
from infrastructure.embeddings.openai_embedder import openai_embedder
from infrastructure.events.inprocess_event_log import InProcessEventLog
from infrastructure.events.inprocess_task_control import InProcessTaskControl
from infrastructure.events.inprocess_task_presence import InProcessTaskPresence
from infrastructure.events.redis_event_log import RedisEventLog
from infrastructure.events.redis_task_control import RedisTaskControl
from infrastructure.events.redis_task_presence import RedisTaskPresence
from infrastructure.memory.extractive_summarizer import ExtractiveSummarizer
from infrastructure.memory.inprocess_memory_store import InProcessEmbeddingCache, InProcessMemoryStore
from infrastructure.memory.llm_memory_models import LLMEntityExtractor, LLMSummarizer
from infrastructure.memory.redis_embedding_cache import RedisEmbeddingCache
from infrastructure.memory.redis_memory_store import RedisMemoryStore
from infrastructure.memory.rule_entity_extractor import RuleBasedEntityExtractor
from infrastructure.models.agentscope_chat_model import AgentScopeChatModel
from infrastructure.models.openai_chat_model import OpenAIChatModel
from infrastructure.models.provider_config import provider_config
from infrastructure.models.scripted_model import ScriptedChatModel
from infrastructure.persistence.database import Database
from infrastructure.persistence.sqlalchemy_api_key_store import SqlAlchemyApiKeyStore
from infrastructure.persistence.sqlalchemy_knowledge_base import SqlAlchemyKnowledgeBase
from infrastructure.persistence.sqlalchemy_message_store import SqlAlchemyMessageStore
from infrastructure.redis_client import RedisClient
from infrastructure.runtime.system import AsyncioSpawner, SystemClock, TokenSecrets, UuidGenerator
from infrastructure.runtime.tiktoken_tokenizer import TiktokenTokenizer
from infrastructure.tools.builtin import builtin_tools
from infrastructure.tools.composite import CompositeToolBox
from infrastructure.tools.mcp_client import McpServers
from infrastructure.tools.mcp_transport import server_configs


def default_agent(agent: dict) -> AgentConfig:  # type: ignore[type-arg]
    review = agent["review_response"]
    return AgentConfig(
        app_id=AppId("default"),
        preset_prompt=agent["preset_prompt"],
        dialog_round=agent["dialog_round"],
        history_max_tokens=agent["history_max_tokens"],
        tool_names=tuple(agent["tools"]),
        max_tool_rounds=agent["max_tool_rounds"],
        input_review=KeywordReview(tuple(agent["input_review_keywords"]), review),
        output_review=KeywordReview(tuple(agent["output_review_keywords"]), review),
        dataset_ids=tuple(agent.get("dataset_ids") or ()),
        retrieval_top_k=agent.get("retrieval_top_k", 3),
        retrieval_min_score=agent.get("retrieval_min_score", 0.0),
        summary_enabled=agent.get("summary_enabled", True),
    )


def memory_policy_of(memory: dict) -> MemoryPolicy:  # type: ignore[type-arg]
    return MemoryPolicy(
        compact_threshold=memory["compact_threshold"],
        compact_batch=memory["compact_batch"],
        archive_top_k=memory["archive_top_k"],
        entity_min_confidence=memory["entity_min_confidence"],
        summary=SummaryLimit(memory["summary_max_words"], memory["summary_max_cjk_chars"]),
        recall_max_tokens=memory["recall_max_tokens"],
        inline_entities=memory["entity_extraction"] == "inline",
    )


class Container(containers.DeclarativeContainer):
    wiring_config = containers.WiringConfiguration(packages=["interfaces.http"])

    config = providers.Configuration(strict=True)

    clock = providers.Singleton(SystemClock)
    ids = providers.Singleton(UuidGenerator)
    tokenizer = providers.Singleton(TiktokenTokenizer, config.tokenizer_encoding)
    spawner = providers.Singleton(AsyncioSpawner)

    database = providers.Singleton(
        Database, config.database.url, pool_size=config.database.pool_size, max_overflow=config.database.max_overflow
    )
    message_store = providers.Singleton(SqlAlchemyMessageStore, database)
    redis = providers.Singleton(RedisClient, config.redis.url, prefix=config.redis.key_prefix)

    memory_store = providers.Selector(
        config.memory.backend,
        inprocess=providers.Singleton(InProcessMemoryStore, lock_wait=config.memory.upkeep_wait),
        redis=providers.Singleton(
            RedisMemoryStore, redis, window_ttl=config.memory.window_ttl, lock_lease=config.memory.upkeep_lease,
            lock_wait=config.memory.upkeep_wait,
        ),
    )
    memory_policy = providers.Singleton(memory_policy_of, config.memory)
    embedding_cache = providers.Selector(
        config.memory.backend,
        inprocess=providers.Singleton(
            InProcessEmbeddingCache, config.memory.embedding_cache_size, config.memory.embedding_cache_ttl
        ),
        redis=providers.Singleton(RedisEmbeddingCache, redis, config.memory.embedding_cache_ttl),
    )
    event_log = providers.Selector(
        config.events.backend,
        inprocess=providers.Singleton(InProcessEventLog),
        redis=providers.Singleton(RedisEventLog, redis, max_len=config.events.stream_maxlen),
    )
    task_control = providers.Selector(
        config.events.backend,
        inprocess=providers.Singleton(InProcessTaskControl),
        redis=providers.Singleton(RedisTaskControl, redis),
    )
    task_presence = providers.Selector(
        config.events.backend,
        inprocess=providers.Singleton(InProcessTaskPresence),
        redis=providers.Singleton(RedisTaskPresence, redis),
    )
    llm_config = providers.Singleton(provider_config, config.llm)
    chat_model = providers.Selector(
        config.llm["provider"],  # `config.llm.provider` would name the option's own provider attribute
        scripted=providers.Singleton(
            ScriptedChatModel, tokenizer, chunk_delay=config.llm.scripted_chunk_delay
        ),
        openai=providers.Singleton(OpenAIChatModel, llm_config),
        agentscope=providers.Singleton(
            AgentScopeChatModel, llm_config, config.llm.agentscope_class, config.llm.agentscope_kwargs
        ),
    )
    builtin_tool_registry = providers.Singleton(builtin_tools)
    # MCP servers: started and closed by the app's lifespan (and `memagent mcp`), never by the container.
    tool_servers = providers.Singleton(
        McpServers, providers.Callable(server_configs, config.mcp), retry_interval=config.mcp.retry_interval
    )
    toolbox = providers.Singleton(CompositeToolBox, builtin_tool_registry, tool_servers)
    embedder = providers.Selector(
        config.embeddings.backend,
        lexical=providers.Singleton(LexicalEmbedder, config.embeddings.lexical_dim),
        openai=providers.Singleton(openai_embedder, config.embeddings, config.llm),
    )
    knowledge_base = providers.Singleton(SqlAlchemyKnowledgeBase, database)
    retrieval = providers.Singleton(Retrieval, knowledge_base, embedder)
    agent_configs = providers.Singleton(
        StaticAgentConfigs, providers.List(providers.Callable(default_agent, config.agent))
    )

    turn_limits = providers.Singleton(
        TurnLimits,
        turn_timeout=config.turn.timeout,
        event_retention=config.events.retention,
        tool_timeout=config.turn.tool_timeout,
        retry=providers.Singleton(RetryPolicy, config.turn.tool_retries, config.turn.tool_retry_delay),
        watch=providers.Singleton(
            WatchTimes, config.turn.stop_check_interval, config.turn.client_grace, config.turn.worker_lease
        ),
    )
    input_limits = providers.Singleton(
        InputLimits, max_query_bytes=config.turn.max_query_bytes, task_ttl=config.turn.task_ttl
    )

    short_term = providers.Singleton(ShortTermMemory, message_store, memory_store, tokenizer, memory_policy)
    # The memory tiers' model work: extractive and rule-based with the offline scripted model, else the LLM.
    summarizer = providers.Selector(
        config.llm["provider"],
        scripted=providers.Singleton(ExtractiveSummarizer),
        openai=providers.Singleton(LLMSummarizer, chat_model),
        agentscope=providers.Singleton(LLMSummarizer, chat_model),
    )
    entity_extractor = providers.Selector(
        config.llm["provider"],
        scripted=providers.Singleton(RuleBasedEntityExtractor),
        openai=providers.Singleton(LLMEntityExtractor, chat_model),
        agentscope=providers.Singleton(LLMEntityExtractor, chat_model),
    )
    # An embedding model's vectors are cached; a lexical vector costs less to compute than a cache round trip.
    memory_embedder = providers.Selector(
        config.embeddings.backend,
        lexical=embedder,
        openai=providers.Singleton(CachedEmbedder, embedder, embedding_cache),
    )
    memory_recall = providers.Singleton(
        MemoryRecall, memory_store, memory_store, memory_embedder, tokenizer, memory_policy
    )
    memory_upkeep = providers.Singleton(
        MemoryUpkeep, message_store, short_term, memory_store, memory_store, memory_store, summarizer,
        entity_extractor, memory_embedder, spawner, clock, memory_policy,
    )
    conversation_memory = providers.Singleton(
        ConversationMemory, message_store, memory_store, memory_store, memory_store, clock, memory_policy
    )
    run_turn = providers.Singleton(
        RunChatTurn, message_store, short_term, event_log, task_control, task_presence, chat_model, toolbox,
        tokenizer, clock, ids, turn_limits, retrieval, recall=memory_recall, upkeep=memory_upkeep,
    )
    start_turn = providers.Singleton(
        StartChatTurn, message_store, agent_configs, task_control, event_log, run_turn, spawner, clock, ids,
        input_limits,
    )
    follow_task = providers.Singleton(
        FollowTask, task_control, event_log, task_presence, clock,
        providers.Singleton(FollowTimes, config.events.keepalive, config.turn.client_grace),
    )
    sweep_stale_turns = providers.Singleton(
        SweepStaleTurns, message_store, task_presence, spawner, event_log, clock, ids, config.turn.worker_lease,
        config.events.retention,
    )
    stop_task = providers.Singleton(StopTask, task_control, message_store)
    read_history = providers.Singleton(ReadHistory, message_store)
    memory_queries = providers.Singleton(MemoryQueries, message_store, embedder)

    document_limits = providers.Singleton(
        DocumentLimits, config.knowledge.max_document_bytes, config.knowledge.chunk_size,
        config.knowledge.chunk_overlap,
    )
    create_dataset = providers.Singleton(CreateDataset, knowledge_base, clock, ids)
    add_document = providers.Singleton(AddDocument, knowledge_base, embedder, ids, document_limits)
    describe_dataset = providers.Singleton(DescribeDataset, knowledge_base, knowledge_base)

    secrets = providers.Singleton(TokenSecrets)
    api_key_store = providers.Singleton(SqlAlchemyApiKeyStore, database)
    authenticate = providers.Singleton(Authenticate, api_key_store, require_keys=config.auth.require_keys)
    create_api_key = providers.Singleton(CreateApiKey, api_key_store, secrets, clock, ids)
    list_api_keys = providers.Singleton(ListApiKeys, api_key_store)
    revoke_api_key = providers.Singleton(RevokeApiKey, api_key_store, clock)
