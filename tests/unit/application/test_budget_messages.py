"""The refusal of a spent budget says how much, readably, however small the amounts."""

from __future__ import annotations

import pytest

from application.model_calls.budgets import BudgetExceeded, BudgetPolicy, CheckBudgets
from domain.billing.model_calls import Budget
from infrastructure.metrics.inprocess_metrics import InProcessMetrics
from tests.fake_model_call_ledger import SpentLedger
from tests.fakes import FakeClock


@pytest.mark.parametrize(
    ("spent", "limit", "said"),
    [
        (0.00001, 0.00001, "spent: 0.00001 of 0.00001 USD."),  # was "0.0000 of 0.0000 USD."
        (0.0000385, 0.00002, "spent: 0.0000385 of 0.00002 USD."),
        (12.3456, 10.0, "spent: 12.35 of 10.00 USD."),
    ],
)
async def test_a_spent_budget_names_small_amounts_with_their_significant_digits(
    spent: float, limit: float, said: str
) -> None:
    check = CheckBudgets(SpentLedger(spent), FakeClock(), InProcessMetrics(), BudgetPolicy(cache_ttl=0))
    with pytest.raises(BudgetExceeded) as refused:
        await check("alice", "ada", Budget(daily_usd=limit))
    assert refused.value.message.startswith(f"The daily budget of this agent 'ada' is {said}")
