"""Retention's prune, as a container of its own inside the main one (`Container.retention`): the
policy from MEMAGENT_RETENTION__*, the SQL store, the lock (an advisory lock on PostgreSQL, one in
this process on SQLite), the memory store whose caches a removed conversation leaves, and its event logs."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any

from dependency_injector import containers, providers

from application.retention.prune import Prune
from domain.retention import BatchLimits, RetentionPolicy
from infrastructure.persistence.prune_locks import prune_lock
from infrastructure.persistence.sqlalchemy_pruning import SqlAlchemyPruneStore

if TYPE_CHECKING:
    from collections.abc import Mapping

    from application.ports.event_log import EventLog
    from application.ports.memory_store import MemoryStore
    from application.ports.runtime import Clock
    from infrastructure.persistence.database import Database


def _days(days: float) -> timedelta | None:
    return timedelta(days=days) if days else None  # 0: kept for good


def retention_policy(retention: Mapping[str, Any]) -> RetentionPolicy:
    return RetentionPolicy(
        prompt_snapshots=_days(retention["prompt_days"]), steps=_days(retention["step_days"]),
        deleted_conversations=_days(retention["deleted_conversation_days"]),
        model_calls=_days(retention["model_call_days"]), workflow_runs=_days(retention["workflow_run_days"]),
    )


class RetentionContainer(containers.DeclarativeContainer):
    config = providers.Configuration()
    database: providers.Dependency[Database] = providers.Dependency()
    memory: providers.Dependency[MemoryStore] = providers.Dependency()
    events: providers.Dependency[EventLog] = providers.Dependency()
    clock: providers.Dependency[Clock] = providers.Dependency()

    policy = providers.Singleton(retention_policy, retention=config.retention)
    limits = providers.Singleton(BatchLimits, size=config.retention.batch_size, pause=config.retention.batch_pause)
    prune = providers.Singleton(
        Prune, store=providers.Singleton(SqlAlchemyPruneStore, database=database),
        lock=providers.Singleton(prune_lock, database=database), memory=memory, events=events, clock=clock,
        policy=policy, limits=limits,
    )
