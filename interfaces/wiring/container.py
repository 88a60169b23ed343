"""The one place that builds concrete objects. Backends are chosen by configuration.

Adapter constructors do no I/O (they connect on first use or in `start`), so building
a branch that is not selected costs nothing.
"""

from __future__ import annotations

from dependency_injector import containers, providers

from application.accounts.authenticate import Authenticate
from application.accounts.authorize_scrape import AuthorizeScrape
from application.accounts.create_agent_key import CreateAgentKey
from application.accounts.create_api_key import CreateApiKey
from application.accounts.list_agent_keys import ListAgentKeys
from application.accounts.list_api_keys import ListApiKeys
from application.accounts.revoke_agent_key import RevokeAgentKey
from application.accounts.revoke_api_key import RevokeApiKey
from application.agents.cached_agent_store import CachedAgentStore
from application.background_jobs import JobRoutes
from application.chat_turn.agent_loop import AgentLoop
from application.chat_turn.client_tool_relay import ClientToolRelay
from application.chat_turn.complete_chat import CompleteChat
from application.chat_turn.context_conversation import ContextConversation
from application.chat_turn.launch_turn import LaunchTurn
from application.chat_turn.preparing_gate import PreparingGate
from application.chat_turn.regenerate_answer import RegenerateAnswer
from application.chat_turn.resume_turn import ResumeTurn
from application.chat_turn.run_chat_turn import RunChatTurn, TurnLimits
from application.chat_turn.save_outcome import SaveOutcome
from application.chat_turn.start_chat_turn import InputLimits, StartChatTurn
from application.chat_turn.tool_executor import ToolExecutor
from application.chat_turn.turn_events import TurnEvents
from application.chat_turn.turn_jobs import RunTurnJob
from application.chat_turn.turn_parts import TurnParts
from application.chat_turn.turn_quota import QuotaDefaults, TurnQuota
from application.chat_turn.turn_tools import TurnTools
from application.chat_turn.turn_watch import TurnWatch, WatchTimes
from application.chat_turn.turn_workflows import TurnWorkflows
from application.conversations.read_history import ReadHistory
from application.health.check_readiness import CheckReadiness
from application.knowledge.add_document import AddDocument, InRequestIndexing
from application.knowledge.create_dataset import CreateDataset
from application.knowledge.describe_dataset import DescribeDataset
from application.knowledge.documents import DocumentLimits
from application.knowledge.ingest_document import IngestDocument
from application.knowledge.list_datasets import ListDatasets
from application.knowledge.queue_document import QueuedIndexing
from application.knowledge.read_document import ReadDocument
from application.knowledge.retrieval import Retrieval
from application.model_calls.budgets import CheckBudgets
from application.model_calls.cost_estimate import CostEstimate
from application.tasks.find_task import FindTask
from application.tasks.follow_task import FollowTask, FollowTimes
from application.tasks.stop_message import StopMessage
from application.tasks.stop_task import StopTask
from application.tasks.sweep_stale_turns import SweepStaleTurns, SweepTimes
from domain.accounts.rate_limits import RateLimits
from domain.tools.calls import RetryPolicy
from infrastructure.embeddings.lexical import LexicalEmbedder
from infrastructure.embeddings.local_embedder import local_embedder
from infrastructure.events.inprocess_client_tool_exchange import InProcessClientToolExchange
from infrastructure.events.inprocess_event_log import InProcessEventLog
from infrastructure.events.inprocess_task_control import InProcessTaskControl
from infrastructure.events.inprocess_task_presence import InProcessTaskPresence
from infrastructure.events.redis_client_tool_exchange import RedisClientToolExchange
from infrastructure.events.redis_event_log import RedisEventLog
from infrastructure.events.redis_task_control import RedisTaskControl
from infrastructure.events.redis_task_presence import RedisTaskPresence
from infrastructure.jobs.saq_job_queue import JobTimes, SaqJobQueue
from infrastructure.jobs.saq_job_worker import SaqJobWorker
from infrastructure.limits.inprocess_budget_reservations import InProcessBudgetReservations
from infrastructure.limits.inprocess_rate_limiter import InProcessRateLimiter
from infrastructure.limits.redis_budget_reservations import RedisBudgetReservations
from infrastructure.limits.redis_rate_limiter import RedisRateLimiter
from infrastructure.metrics.metered_event_log import MeteredEventLog
from infrastructure.metrics.prometheus_metrics import PrometheusMetrics
from infrastructure.models.chat_model_registry import ChatModelRegistry
from infrastructure.models.model_profiles import profile_specs
from infrastructure.models.observed_models import ModelObserver
from infrastructure.models.provider_models import openai_embedder
from infrastructure.models.provider_recipes import default_chat_model
from infrastructure.persistence.database import Database
from infrastructure.persistence.sqlalchemy_agent_store import SqlAlchemyAgentStore
from infrastructure.persistence.sqlalchemy_api_key_store import SqlAlchemyApiKeyStore
from infrastructure.persistence.sqlalchemy_document_intake import SqlAlchemyDocumentIntake
from infrastructure.persistence.sqlalchemy_knowledge_base import SqlAlchemyKnowledgeBase
from infrastructure.persistence.sqlalchemy_message_store import SqlAlchemyMessageStore
from infrastructure.redis_client import RedisClient
from infrastructure.runtime.system import AsyncioSpawner, SystemClock, TokenSecrets, UuidGenerator
from infrastructure.runtime.tiktoken_tokenizer import TiktokenTokenizer
from infrastructure.tools.builtin import builtin_tools
from infrastructure.tools.composite import CompositeToolBox
from infrastructure.tools.jsonschema_check import JsonSchemaCheck
from infrastructure.tools.mcp_client import McpServers
from infrastructure.tools.mcp_config import server_configs
from infrastructure.tracing.setup import service_tracer
from interfaces.wiring.agents_container import AgentsContainer
from interfaces.wiring.config_objects import default_agent
from interfaces.wiring.conversations_container import ConversationsContainer
from interfaces.wiring.memory_container import MemoryContainer
from interfaces.wiring.model_calls_container import ModelCallsContainer
from interfaces.wiring.readiness_probes import readiness_probes
from interfaces.wiring.retention_container import RetentionContainer
from interfaces.wiring.workflows_container import WorkflowsContainer
from interfaces.wiring.writers_container import WritersContainer

# The packages whose `Provide[...]` resolve from the container. Not wired when a container is built:
# the app that serves the routes wires them (app.py), so the commands that serve nothing build a
# container without importing and wiring every route.
WIRED_PACKAGES = ("interfaces.http",)


class Container(containers.DeclarativeContainer):
    config = providers.Configuration(strict=True)

    clock = providers.Singleton(SystemClock)
    ids = providers.Singleton(UuidGenerator)
    tokenizer = providers.Singleton(TiktokenTokenizer, encoding=config.tokenizer_encoding)
    spawner = providers.Singleton(AsyncioSpawner)
    # GET /metrics: every worker's when they share PROMETHEUS_MULTIPROC_DIR (docs/operations.md "Metrics").
    metrics = providers.Singleton(PrometheusMetrics)
    # OpenTelemetry spans when tracing is on (docs/operations.md "Traces and logs"), else a tracer that records nothing.
    tracer = providers.Singleton(service_tracer, enabled=config.tracing.enabled)

    database = providers.Singleton(
        Database, url=config.database.url, pool_size=config.database.pool_size,
        max_overflow=config.database.max_overflow, metrics=metrics,
    )
    message_store = providers.Singleton(SqlAlchemyMessageStore, database=database)
    # The model-call ledger (every call, priced), its recorder, budgets (docs/operations.md "Cost ledger and budgets").
    model_calls = providers.Container(
        ModelCallsContainer, config=config, database=database, store=message_store, clock=clock, ids=ids,
        metrics=metrics,
    )
    redis = providers.Singleton(RedisClient, url=config.redis.url, prefix=config.redis.key_prefix, metrics=metrics)
    # Background jobs on Redis (saq), run by `memagent worker` when MEMAGENT_JOBS__BACKEND=redis.
    job_queue = providers.Singleton(
        SaqJobQueue, url=config.redis.url, name=config.jobs.queue, times=providers.Singleton(
            JobTimes, timeout=config.jobs.timeout, retries=config.jobs.retries, retry_delay=config.jobs.retry_delay,
        ),
    )

    event_log = providers.Selector(
        config.events.backend,
        inprocess=providers.Singleton(InProcessEventLog),
        redis=providers.Singleton(RedisEventLog, client=redis, max_len=config.events.stream_maxlen),
    )
    task_control = providers.Selector(
        config.events.backend,
        inprocess=providers.Singleton(InProcessTaskControl),
        redis=providers.Singleton(RedisTaskControl, client=redis),
    )
    # Turns paused for their client's own tools, found by any worker (application/chat_turn/client_tool_relay.py).
    client_tool_exchange = providers.Selector(
        config.events.backend,
        inprocess=providers.Singleton(InProcessClientToolExchange),
        redis=providers.Singleton(RedisClientToolExchange, client=redis),
    )
    task_presence = providers.Selector(
        config.events.backend,
        inprocess=providers.Singleton(InProcessTaskPresence),
        redis=providers.Singleton(RedisTaskPresence, client=redis),
    )
    # Rate limits and quotas (turn_quota.py): shared by the workers when their events are (Redis).
    rate_limiter = providers.Selector(
        config.events.backend,
        inprocess=providers.Singleton(InProcessRateLimiter),
        redis=providers.Singleton(RedisRateLimiter, client=redis),
    )
    turn_quota = providers.Singleton(
        TurnQuota, limiter=rate_limiter, clock=clock, metrics=metrics, defaults=providers.Singleton(
            QuotaDefaults, lease=config.limits.lease,
            key=providers.Singleton(
                RateLimits, rpm=config.limits.key_rpm, concurrent_turns=config.limits.key_concurrent_turns,
                tokens_per_day=config.limits.key_tokens_per_day,
            ),
            agent=providers.Singleton(
                RateLimits, rpm=config.limits.agent_rpm, concurrent_turns=config.limits.agent_concurrent_turns,
                tokens_per_day=config.limits.agent_tokens_per_day,
            ),
        ),
    )
    # What turns append goes through this one: each append is timed.
    turn_event_log = providers.Singleton(MeteredEventLog, log=event_log, metrics=metrics)
    # The model profiles (`default` first, from MEMAGENT_LLM__*): MEMAGENT_MODELS' keys are read when the
    # specs are built. Each profile's model is built by its provider's recipe (provider_recipes.py).
    model_profiles = providers.Singleton(profile_specs, llm=config.llm, models=config.models)
    chat_model = providers.Singleton(default_chat_model, specs=model_profiles, tokenizer=tokenizer)
    builtin_tool_registry = providers.Singleton(builtin_tools)
    # MCP servers: started and closed by the app's lifespan (and `memagent mcp`), never by the container.
    tool_servers = providers.Singleton(
        McpServers, configs=providers.Callable(server_configs, mcp=config.mcp), retry_interval=config.mcp.retry_interval
    )
    toolbox = providers.Singleton(CompositeToolBox, builtin=builtin_tool_registry, servers=tool_servers)
    # Every model's calls are counted, billed and traced by this one wrapper (observed_models.py).
    model_observer = providers.Singleton(
        ModelObserver, metrics=metrics, tracer=tracer, tokenizer=tokenizer, recorder=model_calls.record
    )
    embedder = providers.Selector(
        config.embeddings.backend,
        lexical=providers.Singleton(LexicalEmbedder, dim=config.embeddings.lexical_dim),  # no model: not observed
        openai=providers.Singleton(model_observer.provided.embedder.call(
            providers.Singleton(openai_embedder, embeddings=config.embeddings, llm=config.llm), "openai",
            model_calls.embeddings_price,
        )),
        local=providers.Singleton(model_observer.provided.embedder.call(
            providers.Singleton(local_embedder, embeddings=config.embeddings), "local",
        )),
    )
    knowledge_base = providers.Singleton(SqlAlchemyKnowledgeBase, database=database)
    retrieval = providers.Singleton(Retrieval, knowledge=knowledge_base, embedder=embedder)
    chat_models = providers.Singleton(ChatModelRegistry, default=chat_model, specs=model_profiles, tokenizer=tokenizer)
    # Budgets hold under concurrency by reservation (budgets.py): shared by the workers when their events are (Redis).
    budgets = providers.Singleton(
        CheckBudgets, ledger=model_calls.ledger, clock=clock, metrics=metrics, policy=model_calls.budget_policy,
        reservations=providers.Selector(
            config.events.backend,
            inprocess=providers.Singleton(InProcessBudgetReservations),
            redis=providers.Singleton(RedisBudgetReservations, client=redis),
        ),
        estimate=providers.Singleton(
            CostEstimate, tokenizer=tokenizer, models=chat_models, completion_tokens=config.budgets.completion_estimate
        ),
    )
    # GET /readyz: the database, Redis (when a backend uses it) and each model profile, at most every 10 s.
    check_readiness = providers.Singleton(
        CheckReadiness, clock=clock, probes=providers.Callable(
            readiness_probes, database=database, redis=redis, specs=model_profiles,
            backends=providers.List(config.memory.backend, config.events.backend),
        ),
    )
    # Agents are kept in process for a moment (a turn then costs no read); this process's changes drop them at once.
    agent_store = providers.Singleton(
        CachedAgentStore, store=providers.Singleton(SqlAlchemyAgentStore, database=database), clock=clock,
        ttl=config.agents.cache_ttl,
    )
    # The MEMAGENT_AGENT__* settings as the config of the platform's default agent (published at start-up).
    default_agent_config = providers.Singleton(default_agent, agent=config.agent)
    # Workflows as data (docs/workflows.md): drafts, numbered versions, checked against the tools,
    # datasets and model profiles they name.
    workflows = providers.Container(
        WorkflowsContainer, config=config, database=database, toolbox=toolbox, knowledge=knowledge_base,
        models=chat_models, embedder=embedder, clock=clock, ids=ids, metrics=metrics, tracer=tracer,
        tokenizer=tokenizer, recorder=model_calls.record, events=event_log, tasks=task_control, presence=task_presence,
        spawner=spawner, messages=message_store,
    )
    agents = providers.Container(
        AgentsContainer, store=agent_store, models=chat_models, toolbox=toolbox, knowledge=knowledge_base,
        clock=clock, ids=ids, database=database, tool_catalog=toolbox,
        workflow_store=workflows.store,
    )

    turn_limits = providers.Singleton(
        TurnLimits,
        turn_timeout=config.turn.timeout,
        event_retention=config.events.retention,
        tool_timeout=config.turn.tool_timeout,
        retry=providers.Singleton(
            RetryPolicy, timeout_retries=config.turn.tool_retries, retry_delay=config.turn.tool_retry_delay
        ),
        watch=providers.Singleton(
            WatchTimes, stop_check_interval=config.turn.stop_check_interval, client_grace=config.turn.client_grace,
            worker_lease=config.turn.worker_lease, task_ttl=config.turn.task_ttl,
        ),
    )
    input_limits = providers.Singleton(InputLimits, max_query_bytes=config.turn.max_query_bytes)

    memory = providers.Container(  # the tiers, their record and cache, recall, upkeep, the memory API
        MemoryContainer, config=config, database=database, redis=redis, store=message_store, tokenizer=tokenizer,
        clock=clock, spawner=spawner, jobs=job_queue, embedder=embedder, models=chat_models, tracer=tracer,
        observer=model_observer, budgets=budgets,
    )
    writers = providers.Container(  # titles, follow-up questions, and AfterTurn (with the upkeep)
        WritersContainer, models=chat_models, store=message_store, agents=agent_store,
        clock=clock, spawner=spawner, jobs_backend=config.jobs.backend, jobs=job_queue,
        upkeep=memory.upkeep_scheduler, title_wait=config.titles.wait, tracer=tracer, observer=model_observer,
    )
    # A job of a finished turn, run by `memagent worker` from the record alone.
    run_turn_job = providers.Singleton(
        RunTurnJob, store=message_store, configs=writers.configs, upkeep=memory.upkeep,
        name=writers.name_conversation, suggest=writers.suggest_follow_ups, tracer=tracer,
    )
    # The objects of one turn: factories, called by RunChatTurn with the per-turn values by keyword.
    schema_check = providers.Singleton(JsonSchemaCheck)  # structured output's schemas and answers
    turn_parts = providers.Singleton(
        TurnParts,
        # A turn's model calls count in the metrics under `chat` and its profile, and are spans of its trace.
        models=model_observer.provided.chat_models.call(chat_models),
        metrics=metrics,
        tracer=tracer,
        preparing=providers.Singleton(PreparingGate, limit=config.turn.preparing_at_once),
        new_events=providers.Factory(
            TurnEvents, log=turn_event_log, tasks=task_control, clock=clock, ids=ids
        ).provider,
        new_tools=providers.Factory(TurnTools, toolbox=toolbox, retrieval=retrieval).provider,
        new_executor=providers.Factory(
            ToolExecutor, policy=turn_limits.provided.retry, timeout=turn_limits.provided.tool_timeout, metrics=metrics,
            tracer=tracer,
        ).provider,
        new_loop=providers.Factory(AgentLoop, tokenizer=tokenizer, ids=ids).provider,
        new_watch=providers.Factory(
            TurnWatch, tasks=task_control, presence=task_presence, clock=clock, times=turn_limits.provided.watch
        ).provider,
        new_relay=providers.Factory(
            ClientToolRelay, exchange=client_tool_exchange, timeout=config.turn.client_tool_timeout
        ).provider,
        schemas=schema_check,
        # An agent's pinned workflow versions are tools of its turns (docs/workflows.md).
        new_workflows=providers.Factory(TurnWorkflows, tools=workflows.tools).provider,
    )
    run_turn = providers.Singleton(
        RunChatTurn, save=providers.Singleton(SaveOutcome, store=message_store, retry_for=config.turn.save_retry,
                                              ledger=model_calls.record),
        short_term=memory.short_term, recall=memory.recall, after=writers.after_turn, parts=turn_parts,
        limits=turn_limits,
    )
    launch_turn = providers.Singleton(
        LaunchTurn, tasks=task_control, events=event_log, run_turn=run_turn, spawner=spawner, tracer=tracer,
        task_ttl=config.turn.task_ttl,
    )
    start_turn = providers.Singleton(
        StartChatTurn, store=message_store, resolve=agents.resolve_config, launch=launch_turn, clock=clock, ids=ids,
        limits=input_limits, quota=turn_quota, budgets=budgets,
    )
    # One lookup for following and stopping: a running turn whose record Redis lost is found in the database.
    find_task = providers.Singleton(FindTask, tasks=task_control, messages=message_store, task_ttl=config.turn.task_ttl)
    follow_task = providers.Singleton(
        FollowTask, find=find_task, tasks=task_control, events=event_log, presence=task_presence, store=message_store,
        clock=clock, times=providers.Singleton(
            FollowTimes, keepalive=config.events.keepalive, client_grace=config.turn.client_grace
        ),
    )
    sweep_stale_turns = providers.Singleton(
        SweepStaleTurns, store=message_store, presence=task_presence, spawner=spawner, events=event_log, clock=clock,
        ids=ids, times=providers.Singleton(
            SweepTimes, worker_lease=config.turn.worker_lease, retention=config.events.retention,
            confirm_after=providers.Callable(lambda lease: lease / 2, config.turn.worker_lease),
        ),
    )
    stop_task = providers.Singleton(StopTask, find=find_task, tasks=task_control, store=message_store)
    stop_message = providers.Singleton(StopMessage, store=message_store, stop=stop_task)
    complete_chat = providers.Singleton(
        CompleteChat, models=agents.list_models, store=message_store, start=start_turn, schemas=schema_check,
        resume=providers.Singleton(ResumeTurn, exchange=client_tool_exchange, models=agents.list_models),
    )
    context_conversation = providers.Singleton(ContextConversation, store=message_store, ids=ids)
    read_history = providers.Singleton(ReadHistory, store=message_store)
    regenerate_answer = providers.Singleton(RegenerateAnswer, store=message_store, start=start_turn)
    conversations = providers.Container(
        ConversationsContainer, store=message_store, tasks=task_control, memory=memory.conversation_memory, clock=clock,
        database=database, forgetting=memory.user_facts, events=event_log,
    )
    # Retention: `memagent prune` and the scheduled prune (interfaces/lifecycle.py).
    retention = providers.Container(
        RetentionContainer, config=config, database=database, memory=memory.memory_store, events=event_log,
        clock=clock,
    )

    document_limits = providers.Singleton(
        DocumentLimits, max_bytes=config.knowledge.max_document_bytes, chunk_size=config.knowledge.chunk_size,
        chunk_overlap=config.knowledge.chunk_overlap,
    )
    create_dataset = providers.Singleton(CreateDataset, knowledge=knowledge_base, clock=clock, ids=ids)
    document_intake = providers.Singleton(SqlAlchemyDocumentIntake, database=database)
    # A document indexed in its request, or (MEMAGENT_JOBS__BACKEND=redis) by an ingestion job.
    add_document = providers.Singleton(
        AddDocument, knowledge=knowledge_base, ids=ids, clock=clock, limits=document_limits,
        indexing=providers.Selector(
            config.jobs.backend,
            inprocess=providers.Singleton(InRequestIndexing, intake=document_intake, embedder=embedder, ids=ids,
                                          limits=document_limits),
            redis=providers.Singleton(QueuedIndexing, intake=document_intake, jobs=job_queue),
        ),
    )
    read_document = providers.Singleton(ReadDocument, intake=document_intake)
    # What `memagent worker` runs: a turn's job (run_turn_job) or an ingestion, by its kind.
    ingest_document = providers.Singleton(
        IngestDocument, intake=document_intake, embedder=embedder, ids=ids, limits=document_limits
    )
    job_worker = providers.Singleton(
        SaqJobWorker, queue=job_queue, handler=providers.Singleton(JobRoutes, turns=run_turn_job,
                                                                   documents=ingest_document),
        concurrency=config.jobs.concurrency, sweep_interval=config.jobs.sweep_interval,
    )
    describe_dataset = providers.Singleton(DescribeDataset, knowledge=knowledge_base, inventory=knowledge_base)
    list_datasets = providers.Singleton(ListDatasets, knowledge=knowledge_base, inventory=knowledge_base)

    secrets = providers.Singleton(TokenSecrets)
    api_key_store = providers.Singleton(SqlAlchemyApiKeyStore, database=database)
    authenticate = providers.Singleton(Authenticate, keys=api_key_store, require_keys=config.auth.require_keys)
    authorize_scrape = providers.Singleton(AuthorizeScrape, authenticate=authenticate, token=config.metrics.token)
    create_api_key = providers.Singleton(CreateApiKey, keys=api_key_store, secrets=secrets, clock=clock, ids=ids)
    list_api_keys = providers.Singleton(ListApiKeys, keys=api_key_store)
    revoke_api_key = providers.Singleton(RevokeApiKey, keys=api_key_store, clock=clock)
    # Agent keys read the agent from the database: one made a moment ago by another process counts.
    create_agent_key = providers.Singleton(CreateAgentKey, create=create_api_key, agents=agents.fresh)
    list_agent_keys = providers.Singleton(ListAgentKeys, keys=api_key_store, agents=agents.fresh)
    revoke_agent_key = providers.Singleton(RevokeAgentKey, keys=api_key_store, agents=agents.fresh, clock=clock)
