"""The model-call ledger, as a container of its own inside the main one (`Container.model_calls`):
the SQL ledger, its recorder (which the metered model decorators write to), budgets and the
conversation usage route's use case (docs/ARCHITECTURE.md §5, "Cost ledger")."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dependency_injector import containers, providers

from application.model_calls.budgets import BudgetPolicy
from application.model_calls.conversation_usage import ReadConversationUsage
from application.model_calls.record_model_calls import RecordModelCalls
from domain.billing.model_calls import Budget
from infrastructure.models.price_table import with_built_in
from infrastructure.models.provider_config import TokenPrice, price_for
from infrastructure.persistence.sqlalchemy_model_call_ledger import SqlAlchemyModelCallLedger

if TYPE_CHECKING:
    from collections.abc import Mapping

    from application.ports.message_store import MessageStore
    from application.ports.metrics import Metrics
    from application.ports.runtime import Clock, IdGenerator
    from infrastructure.persistence.database import Database


def embedding_price(embeddings: Mapping[str, Any], llm: Mapping[str, Any]) -> TokenPrice:
    """The embedding model's input price: an entry of MEMAGENT_LLM__PRICES (or the built-in table)
    named like it, else 0."""
    return price_for(str(embeddings["model"]), with_built_in(llm.get("prices") or {}))


class ModelCallsContainer(containers.DeclarativeContainer):
    config = providers.Configuration()
    database: providers.Dependency[Database] = providers.Dependency()
    store: providers.Dependency[MessageStore] = providers.Dependency()
    clock: providers.Dependency[Clock] = providers.Dependency()
    ids: providers.Dependency[IdGenerator] = providers.Dependency()
    metrics: providers.Dependency[Metrics] = providers.Dependency()

    ledger = providers.Singleton(SqlAlchemyModelCallLedger, database=database)
    record = providers.Singleton(RecordModelCalls, ledger=ledger, clock=clock, ids=ids)
    embeddings_price = providers.Singleton(embedding_price, embeddings=config.embeddings, llm=config.llm)
    # CheckBudgets itself is the main container's: its reservations and estimates need Redis and the models.
    budget_policy = providers.Singleton(
        BudgetPolicy,
        account=providers.Singleton(
            Budget, daily_usd=config.budgets.account_daily_usd, monthly_usd=config.budgets.account_monthly_usd
        ),
        warn_at=config.budgets.warn_at, cache_ttl=config.budgets.cache_ttl,
    )
    read_usage = providers.Singleton(ReadConversationUsage, store=store, ledger=ledger)
