"""Budgets reserve what running work is expected to cost: turns arriving together are admitted only
while the budget has room, and memory upkeep of an agent whose budget is spent is skipped."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from application.memory.run_upkeep import MemoryUpkeep
from application.model_calls.budgets import BudgetExceeded, BudgetPolicy, CheckBudgets
from application.model_calls.cost_estimate import CostEstimate
from application.ports.chat_models import ModelProfile
from domain.agents.config import AgentConfig, ModelCapabilities, ModelParams
from domain.billing.model_calls import Budget
from domain.conversations.conversation import Message
from domain.ids import AppId, ConversationId, MessageId, OwnerId, TaskId
from domain.memory.window import MemoryPolicy
from infrastructure.limits.inprocess_budget_reservations import InProcessBudgetReservations
from infrastructure.memory.inprocess_memory_store import InProcessMemoryStore
from infrastructure.metrics.inprocess_metrics import InProcessMetrics
from tests.fake_model_call_ledger import SpentLedger
from tests.fakes import T0, FakeClock

# 1 USD per million prompt tokens, 4 per million completion tokens.
PRICED = ModelProfile("default", "openai", "m", ModelCapabilities(), input_price=1.0, output_price=4.0, priced=True)
CONFIG = AgentConfig(
    AppId("ada"), preset_prompt="", history_max_tokens=1000, model_params=ModelParams(max_tokens=250),
    budget=Budget(daily_usd=0.01),
)
# A turn's estimate: its window and max_tokens (no preset prompt, 0 tokens for the query): 0.002 USD.


class Models:
    def profiles(self) -> list[ModelProfile]:
        return [PRICED]

    def get(self, name: str) -> Any:
        raise AssertionError("an estimate calls no model")


class NoTokens:
    def count(self, text: str) -> int:
        return 0


def budgets(spent: float, reservations: InProcessBudgetReservations | None = None) -> CheckBudgets:
    return CheckBudgets(
        SpentLedger(spent), FakeClock(step=0), InProcessMetrics(), BudgetPolicy(cache_ttl=5.0),
        reservations or InProcessBudgetReservations(), CostEstimate(NoTokens(), Models(), completion_tokens=500),
    )


async def test_turns_arriving_together_are_admitted_while_the_budget_has_room_for_their_estimates() -> None:
    check = budgets(spent=0.0)

    async def turn(n: int) -> bool:
        try:
            await check.for_turn("alice", "ada", CONFIG, "q", f"t{n}")
        except BudgetExceeded:
            return False
        return True

    admitted = sum(await asyncio.gather(*(turn(n) for n in range(60))))
    assert admitted == 5  # 0.01 / 0.002: the fifth starts with 0.008 held, the sixth finds 0.010


async def test_a_turn_settled_at_its_cost_leaves_the_rest_of_its_estimate_free() -> None:
    check = budgets(spent=0.0)
    holds = [await check.for_turn("alice", "ada", CONFIG, "q", f"t{n}") for n in range(5)]
    for hold in holds:
        assert hold is not None
        await hold.end(0.0005)  # each cost a quarter of its estimate
    assert await check.for_turn("alice", "ada", CONFIG, "q", "t5") is not None


async def test_a_reservation_given_back_frees_its_room_at_once() -> None:
    check = budgets(spent=0.009)
    hold = await check.for_turn("alice", "ada", CONFIG, "q", "t1")
    assert hold is not None
    with pytest.raises(BudgetExceeded, match="turns running now hold the rest"):
        await check.for_turn("alice", "ada", CONFIG, "q", "t2")
    await hold.end(None)
    assert await check.for_turn("alice", "ada", CONFIG, "q", "t2") is not None


class Jobs:
    """The upkeep's jobs, counting the runs."""

    def __init__(self) -> None:
        self.runs = 0

    def digest(self, *_: Any) -> Any:
        self.runs += 1
        return asyncio.sleep(0)

    def fold(self, *_: Any) -> Any:
        return asyncio.sleep(0)


def upkeep(check: CheckBudgets, jobs: Jobs) -> MemoryUpkeep:
    store = InProcessMemoryStore()
    return MemoryUpkeep(store, jobs, jobs.digest, jobs.fold, MemoryPolicy(), budgets=check)  # type: ignore[arg-type]


def finished_turn() -> Message:
    return Message(
        id=MessageId("m1"), conversation_id=ConversationId("c1"), owner=OwnerId("alice"), task_id=TaskId("t1"),
        query="q", created_at=T0, updated_at=T0, agent_id=AppId("ada"),
    )


async def test_the_upkeep_of_an_agent_whose_budget_is_spent_is_skipped() -> None:
    jobs = Jobs()
    await upkeep(budgets(spent=0.01), jobs).run(CONFIG, [finished_turn()])
    assert jobs.runs == 0


async def test_the_upkeep_within_budget_runs_and_holds_its_estimate_while_it_runs() -> None:
    jobs, reservations = Jobs(), InProcessBudgetReservations()
    check = budgets(spent=0.0, reservations=reservations)
    await upkeep(check, jobs).run(CONFIG, [finished_turn()])
    assert jobs.runs == 1
    # Settled at its estimate (1000 prompt, 500 completion tokens: 0.003), counted until the ledger has it.
    await check.for_turn("alice", "ada", CONFIG, "q", "t1")
    await check.for_turn("alice", "ada", CONFIG, "q", "t2")
    await check.for_turn("alice", "ada", CONFIG, "q", "t3")
    await check.for_turn("alice", "ada", CONFIG, "q", "t4")  # 0.003 + 3 × 0.002 held = 0.009: still room
    with pytest.raises(BudgetExceeded):
        await check.for_turn("alice", "ada", CONFIG, "q", "t5")  # 0.011 held
