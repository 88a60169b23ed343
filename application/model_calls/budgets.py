"""CheckBudgets: a turn is refused once its account or its agent has spent its budget.

Budgets are USD per UTC day and per UTC month: the account's from the settings
(`MEMAGENT_BUDGETS__ACCOUNT_*`), the agent's from its config (`budget`). What was spent is the
ledger's sum of the calls since the period began, every purpose included (a turn's upkeep is
spent money too).

The check comes before the query is stored, like the input's validation and the rate limits: a
refused turn never started, so there is nothing to keep (docs/ARCHITECTURE.md §3 step 1).

A sum is kept `cache_ttl` seconds per account (or agent) and period, so a turn's start runs no
query most of the time. The staleness bound: a budget crossed is noticed at most `cache_ttl`
seconds (plus the ledger's write: a moment, or for a turn's own calls the end of that turn, whose
save writes them) late; turns started meanwhile, and those running, are still spent. So a budget is
a ceiling the spend passes by at most what that window costs.

Each check sets the budget's used share in the metrics (`budget_used`, by scope and agent), and a
turn that starts with `warn_at` or more of a budget used counts a warning (`budget_alert`): the soft
warning before the refusal, which counts as `exceeded`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from application.errors import ApplicationError
from domain.model_calls import Budget
from domain.money import usd

if TYPE_CHECKING:
    from application.ports.metrics import Metrics
    from application.ports.model_call_ledger import ModelCallLedger
    from application.ports.runtime import Clock

DAILY, MONTHLY = "daily", "monthly"
ACCOUNT, AGENT = "account", "agent"
WARNING, EXCEEDED = "warning", "exceeded"
CACHED_SUMS = 10_000


class BudgetExceeded(ApplicationError):
    """The account or the agent has spent its budget of the day or of the month."""

    code = "budget_exceeded"


@dataclass(frozen=True, slots=True)
class BudgetPolicy:
    account: Budget = field(default_factory=Budget)
    warn_at: float = 0.8  # the share of a budget that counts a warning
    cache_ttl: float = 5.0  # seconds a spend sum is reused


class CheckBudgets:
    def __init__(self, ledger: ModelCallLedger, clock: Clock, metrics: Metrics, policy: BudgetPolicy) -> None:
        self._ledger = ledger
        self._clock = clock
        self._metrics = metrics
        self._policy = policy
        self._sums: dict[tuple[str, str | None, datetime], tuple[float, float]] = {}

    async def __call__(self, owner: str, agent_id: str, agent_budget: Budget) -> None:
        """Raises `BudgetExceeded` when a budget of the account or of the agent is spent (the
        account's first), and `StoreUnavailable` when the ledger cannot be read."""
        if not (self._policy.account.is_set or agent_budget.is_set):
            return
        now = self._clock.now().astimezone(UTC)
        day = now.replace(hour=0, minute=0, second=0, microsecond=0)
        periods = ((DAILY, day), (MONTHLY, day.replace(day=1)))
        for scope, budget, agent in ((ACCOUNT, self._policy.account, None), (AGENT, agent_budget, agent_id)):
            for period, since in periods:
                limit = budget.daily_usd if period == DAILY else budget.monthly_usd
                if limit is not None:
                    await self._check(scope, period, limit, await self._spent(owner, agent, since), agent_id)

    async def _check(self, scope: str, period: str, limit: float, spent: float, agent_id: str) -> None:
        ratio = spent / limit if limit > 0 else 1.0
        label = f"{scope}_{period}"
        self._metrics.budget_used(label, agent_id, ratio)
        if spent >= limit:
            self._metrics.budget_alert(label, agent_id, EXCEEDED)
        elif ratio >= self._policy.warn_at:
            self._metrics.budget_alert(label, agent_id, WARNING)
        if spent >= limit:
            whose = "account" if scope == ACCOUNT else f"agent {agent_id!r}"
            raise BudgetExceeded(
                f"The {period} budget of this {whose} is spent: {usd(spent)} of {usd(limit)} USD. "
                f"Turns are refused until the {'day' if period == DAILY else 'month'} ends (UTC) "
                "or the budget is raised."
            )

    async def _spent(self, owner: str, agent_id: str | None, since: datetime) -> float:
        key = (owner, agent_id, since)
        now = self._clock.monotonic()
        cached = self._sums.get(key)
        if cached is not None and now - cached[1] < self._policy.cache_ttl:
            return cached[0]
        spent = await self._ledger.spent(owner, since, agent_id)
        if len(self._sums) >= CACHED_SUMS:
            self._sums.clear()  # old periods' sums: dropping them all costs one query each
        self._sums[key] = (spent, now)
        return spent
