"""The one place that builds concrete objects. Backends are chosen by configuration.

Adapter constructors do no I/O (they connect on first use or in `start`), so building
a branch that is not selected costs nothing.
"""

from __future__ import annotations

from dependency_injector import containers, providers

from application.follow_task import FollowTask
from application.read_history import ReadHistory
from application.recall_memory import ShortTermMemory
from application.run_chat_turn import RunChatTurn, TurnLimits
from application.start_chat_turn import InputLimits, StartChatTurn
from application.stop_task import StopTask
from domain.agent import AgentConfig
from domain.ids import AppId
from domain.review import KeywordReview
from domain.tools import RetryPolicy
from infrastructure.agents.static_agent_configs import StaticAgentConfigs
from infrastructure.events.inprocess_event_log import InProcessEventLog
from infrastructure.events.inprocess_task_control import InProcessTaskControl
from infrastructure.events.redis_event_log import RedisEventLog
from infrastructure.events.redis_task_control import RedisTaskControl
from infrastructure.memory.inprocess_memory_store import InProcessMemoryStore
from infrastructure.memory.redis_memory_store import RedisMemoryStore
from infrastructure.models.scripted_model import ScriptedChatModel
from infrastructure.persistence.database import Database
from infrastructure.persistence.sqlalchemy_message_store import SqlAlchemyMessageStore
from infrastructure.redis_client import RedisClient
from infrastructure.runtime.system import AsyncioSpawner, SystemClock, UuidGenerator
from infrastructure.runtime.tiktoken_tokenizer import TiktokenTokenizer
from infrastructure.tools.builtin import BuiltinToolBox


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
    )


class Container(containers.DeclarativeContainer):
    wiring_config = containers.WiringConfiguration(packages=["interfaces.http"])

    config = providers.Configuration(strict=True)

    clock = providers.Singleton(SystemClock)
    ids = providers.Singleton(UuidGenerator)
    tokenizer = providers.Singleton(TiktokenTokenizer, config.tokenizer_encoding)
    spawner = providers.Singleton(AsyncioSpawner)

    database = providers.Singleton(Database, config.database.url)
    message_store = providers.Singleton(SqlAlchemyMessageStore, database)
    redis = providers.Singleton(RedisClient, config.redis.url, prefix=config.redis.key_prefix)

    memory_store = providers.Selector(
        config.memory.backend,
        inprocess=providers.Singleton(InProcessMemoryStore),
        redis=providers.Singleton(RedisMemoryStore, redis, window_ttl=config.memory.window_ttl),
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
    chat_model = providers.Selector(
        config.llm["provider"],  # `config.llm.provider` would name the option's own provider attribute
        scripted=providers.Singleton(
            ScriptedChatModel, tokenizer, chunk_delay=config.llm.scripted_chunk_delay
        ),
    )
    toolbox = providers.Singleton(BuiltinToolBox)
    agent_configs = providers.Singleton(
        StaticAgentConfigs, providers.List(providers.Callable(default_agent, config.agent))
    )

    turn_limits = providers.Singleton(
        TurnLimits,
        turn_timeout=config.turn.timeout,
        stop_check_interval=config.turn.stop_check_interval,
        event_retention=config.events.retention,
        tool_timeout=config.turn.tool_timeout,
        retry=providers.Singleton(RetryPolicy, config.turn.tool_retries, config.turn.tool_retry_delay),
    )
    input_limits = providers.Singleton(
        InputLimits, max_query_bytes=config.turn.max_query_bytes, task_ttl=config.turn.task_ttl
    )

    short_term = providers.Singleton(ShortTermMemory, message_store, memory_store, tokenizer)
    run_turn = providers.Singleton(
        RunChatTurn, message_store, short_term, event_log, task_control, chat_model, toolbox,
        tokenizer, clock, ids, turn_limits,
    )
    start_turn = providers.Singleton(
        StartChatTurn, message_store, agent_configs, task_control, run_turn, spawner, clock, ids,
        input_limits,
    )
    follow_task = providers.Singleton(FollowTask, task_control, event_log, config.events.keepalive)
    stop_task = providers.Singleton(StopTask, task_control, message_store)
    read_history = providers.Singleton(ReadHistory, message_store)
