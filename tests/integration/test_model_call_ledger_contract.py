"""The model-call ledger on SQLite and PostgreSQL: what is written reads back added up (a conversation
by purpose, an owner's or an agent's spend since a time), the recorder writes what the decorators
give it under the scope it served, the agent stats add the upkeep calls, and budgets refuse on it.

Every test that takes `ledger` runs once per backend (see db_fixtures.database_url).
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING

import pytest
from sqlalchemy import text

from application.model_calls.budgets import BudgetExceeded, BudgetPolicy, CheckBudgets
from application.model_calls.call_scope import CallScope, calls_for, spent_by_turn
from application.model_calls.record_model_calls import RecordModelCalls
from domain.billing.model_calls import Budget, ModelCall, PurposeUsage
from domain.conversations.conversation import Conversation, Message, MessageStatus, TurnOutcome
from domain.conversations.messages import Usage
from domain.ids import AppId, ConversationId, MessageId, OwnerId, TaskId
from infrastructure.metrics.inprocess_metrics import InProcessMetrics
from infrastructure.persistence.sqlalchemy_message_store import SqlAlchemyMessageStore
from infrastructure.persistence.sqlalchemy_model_call_ledger import SqlAlchemyModelCallLedger
from infrastructure.persistence.sqlalchemy_usage_stats import SqlAlchemyUsageStats
from tests.fakes import FakeClock, SequentialIds
from tests.integration.db_fixtures import (  # noqa: F401  (fixtures are used by name)
    database,
    database_url,
    pg_database_url,
)

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from infrastructure.persistence.database import Database

pytestmark = pytest.mark.integration

NOON = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)


def call(n: int, purpose: str = "chat", cost: float = 0.001, at: datetime = NOON, **fields: object) -> ModelCall:
    values: dict[str, object] = {
        "id": f"call{n}", "created_at": at, "owner": "alice", "agent_id": "ada", "conversation_id": "c1",
        "message_id": "m1" if purpose == "chat" else None, "purpose": purpose, "profile": "default",
        "model": "gpt-4o-mini", "usage": Usage(100, 20, cost), "latency": 0.5, "status": "ok",
        "agent_version": 1,
    }
    return ModelCall(**{**values, **fields})  # type: ignore[arg-type]


@pytest.fixture
async def ledger(database: Database) -> AsyncIterator[SqlAlchemyModelCallLedger]:  # noqa: F811
    yield SqlAlchemyModelCallLedger(database)
    if not database.is_sqlite:  # the PostgreSQL database is shared by the session
        async with database.engine.begin() as connection:
            await connection.execute(text("DELETE FROM model_calls"))


async def test_a_conversations_calls_add_up_by_purpose_with_the_estimated_ones_counted(
    ledger: SqlAlchemyModelCallLedger,
) -> None:
    await ledger.add([
        call(1), call(2, usage=Usage(10, 5, 0.0002, estimated=True)), call(3, "summary", 0.0004),
        call(4, "title", 0.0001), call(5, conversation_id="other"),
    ])
    assert await ledger.conversation_usage("c1") == [
        PurposeUsage("chat", 2, 110, 25, pytest.approx(0.0012), 1),  # type: ignore[arg-type]
        PurposeUsage("summary", 1, 100, 20, pytest.approx(0.0004), 0),  # type: ignore[arg-type]
        PurposeUsage("title", 1, 100, 20, pytest.approx(0.0001), 0),  # type: ignore[arg-type]
    ]
    assert await ledger.conversation_usage("nobody's") == []


async def test_spend_since_a_time_is_the_owners_or_one_agents(ledger: SqlAlchemyModelCallLedger) -> None:
    await ledger.add([
        call(1, cost=0.25), call(2, "entities", 0.5, agent_id="ben"),
        call(3, cost=1.0, at=NOON - timedelta(days=1)), call(4, cost=2.0, owner="bob"),
    ])
    assert await ledger.spent("alice", NOON - timedelta(hours=1)) == pytest.approx(0.75)
    assert await ledger.spent("alice", NOON - timedelta(hours=1), "ada") == pytest.approx(0.25)
    assert await ledger.spent("alice", NOON - timedelta(days=2)) == pytest.approx(1.75)
    assert await ledger.spent("carol", NOON) == 0.0


async def test_the_recorder_writes_each_call_for_its_scope_and_adds_up_the_turns_own(
    ledger: SqlAlchemyModelCallLedger,
) -> None:
    recorder = RecordModelCalls(ledger, FakeClock(NOON), SequentialIds())
    scope = CallScope("alice", "ada", "c9", "m9", agent_version=3)
    with calls_for(scope):
        recorder.record("chat", "default", "gpt-4o-mini", Usage(1000, 200, 0.000364), 1.25, "ok")
        recorder.record("chat", "default", "gpt-4o-mini", Usage(40, 7, 0.00001, estimated=True), 0.5, "cancelled")
        recorder.record("title", "default", "gpt-4o-mini", Usage(30, 4, 0.00002), 0.2, "ok")
        spent = spent_by_turn(Usage(1, 1))
        assert (spent.prompt_tokens, spent.completion_tokens, spent.estimated) == (1040, 207, True)
        assert spent.price == pytest.approx(0.000374)  # the turn's own calls: not the title's
    recorder.record("embeddings", "openai", "openai:text-embedding-3-small", Usage(9, 0, estimated=True), 0.1, "ok")
    await recorder.flush()

    assert [(p.purpose, p.calls, p.tokens, p.estimated) for p in await ledger.conversation_usage("c9")] == [
        ("chat", 2, 1247, 1), ("title", 1, 34, 0),
    ]
    assert spent_by_turn(Usage(1, 1)) == Usage(1, 1)  # outside the scope: the turn's own count
    assert await ledger.spent("", NOON - timedelta(days=1)) == 0.0  # the unscoped call is billed to no account


async def test_agent_stats_add_the_upkeep_of_published_conversations_per_day_version_and_in_total(
    database: Database, ledger: SqlAlchemyModelCallLedger  # noqa: F811
) -> None:
    store = SqlAlchemyMessageStore(database)
    await _finished_turn(store, Usage(1000, 200, 0.5))
    yesterday = NOON - timedelta(days=1)
    await ledger.add([
        call(1, "summary", 0.25), call(2, "entities", 0.125, agent_version=2), call(3, "title", 0.0625, at=yesterday),
        call(4, "chat", 9.0),  # a turn's own call: its message counts it already
        call(5, "summary", 8.0, debug=True),  # the debugger's: the builder's own
        call(6, "summary", 7.0, owner="bob"),
    ])
    stats = SqlAlchemyUsageStats(database)
    report = await stats.usage(AppId("ada"), OwnerId("alice"), date(2026, 3, 9), date(2026, 3, 10))
    total = report.total
    assert (total.cost, total.upkeep_cost, total.total_cost) == (0.5, 0.4375, 0.9375)
    assert (total.tokens, total.upkeep_tokens, total.total_tokens) == (1200, 360, 1560)
    assert [(d.day.day, d.figures.messages, d.figures.upkeep_cost) for d in report.days] == [
        (9, 0, 0.0625), (10, 1, 0.375),
    ]
    assert [(v.version, v.figures.messages, v.figures.upkeep_cost) for v in report.versions] == [
        (2, 0, 0.125), (1, 1, 0.3125),
    ]
    only_two = await stats.usage(AppId("ada"), OwnerId("alice"), date(2026, 3, 9), date(2026, 3, 10), version=2)
    assert (only_two.total.messages, only_two.total.upkeep_cost) == (0, 0.125)


async def _finished_turn(store: SqlAlchemyMessageStore, usage: Usage) -> None:
    conversation = Conversation(
        id=ConversationId("c1"), app_id=AppId("ada"), owner=OwnerId("alice"), created_at=NOON, updated_at=NOON,
    )
    message = Message(
        id=MessageId("m1"), conversation_id=conversation.id, owner=OwnerId("alice"), task_id=TaskId("t1"),
        query="q", created_at=NOON, updated_at=NOON, agent_version=1, agent_id=AppId("ada"),
    )
    await store.open_turn(message, conversation)
    await store.finish_message(message.finish(TurnOutcome("a", MessageStatus.NORMAL, usage, 1.0), NOON), [])


async def test_a_budget_spent_refuses_with_a_readable_message_and_counts_warnings_first(
    ledger: SqlAlchemyModelCallLedger,
) -> None:
    clock, metrics = FakeClock(NOON), InProcessMetrics()
    policy = BudgetPolicy(account=Budget(daily_usd=1.0), warn_at=0.5, cache_ttl=0)
    check = CheckBudgets(ledger, clock, metrics, policy)
    await ledger.add([call(1, cost=0.6, at=NOON - timedelta(days=1)), call(2, cost=0.6)])
    await check("alice", "ada", Budget())  # 0.6 of 1.0 today: a warning, not a refusal
    assert metrics.of("budget_alert") == [("account_daily", "ada", "warning")]
    await ledger.add([call(3, cost=0.4)])
    with pytest.raises(BudgetExceeded) as refused:
        await check("alice", "ada", Budget())
    assert refused.value.message.startswith("The daily budget of this account is spent: 1.00 of 1.00 USD.")
    assert metrics.of("budget_alert")[-1] == ("account_daily", "ada", "exceeded")
    await check("bob", "ada", Budget())  # another account's budget is its own
    with pytest.raises(BudgetExceeded, match="monthly budget of this agent 'ada'"):
        await CheckBudgets(ledger, clock, metrics, BudgetPolicy(cache_ttl=0))("alice", "ada", Budget(monthly_usd=1.5))
    assert ("agent_monthly", "ada", pytest.approx(1.6 / 1.5)) in metrics.of("budget_used")


async def test_a_spend_sum_is_reused_for_the_cache_ttl_then_read_again(ledger: SqlAlchemyModelCallLedger) -> None:
    clock = FakeClock(NOON, step=0)
    check = CheckBudgets(ledger, clock, InProcessMetrics(), BudgetPolicy(cache_ttl=5.0))
    agent_budget = Budget(daily_usd=1.0)
    await check("alice", "ada", agent_budget)
    await ledger.add([call(1, cost=2.0)])
    await check("alice", "ada", agent_budget)  # the sum of 5 s ago still stands: the staleness bound
    clock.advance(5.0)
    with pytest.raises(BudgetExceeded):
        await check("alice", "ada", agent_budget)
