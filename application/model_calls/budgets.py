"""CheckBudgets: a turn is refused once its account or its agent has spent its budget, and what
running turns and upkeep are expected to spend is reserved against it first.

Budgets are USD per UTC day and per UTC month: the account's from the settings
(`MEMAGENT_BUDGETS__ACCOUNT_*`), the agent's from its config (`budget`). What was spent is the
ledger's sum of the calls since the period began, every purpose included (a turn's upkeep is
spent money too).

The check comes before the query is stored, like the input's validation and the rate limits: a
refused turn never started, so there is nothing to keep (docs/ARCHITECTURE.md §3 step 1).

**Under concurrency** a budget holds by reservation (`BudgetReservations`, one atomic step in Redis
or in process): a turn is admitted while what was spent plus what running turns reserved is below
the budget, and it reserves its estimate (`CostEstimate`: its prompt's tokens, plus `max_tokens` or
the completion estimate, at its model's price). Its end settles the reservation at what the turn
cost. So however many turns arrive together, they are admitted only while the budget has room, and
the spend passes the budget by at most one estimate (a turn of several model calls can spend more
than its estimate; its settlement counts it all).

**Upkeep** reserves its own estimate the same way before it runs (`for_upkeep`); an account or agent
whose budget is spent has its upkeep skipped: the turns stay in the window, and the next upkeep
once the budget has room (a new day or month, or a raised budget) digests them.

A ledger sum is kept `cache_ttl` seconds per account (or agent) and period, so a turn's start runs
no query most of the time; a settled cost counts against sums read before the ledger held it.

Each check sets the budget's used share in the metrics (`budget_used`, by scope and agent), and a
turn that starts with `warn_at` or more of a budget used counts a warning (`budget_alert`): the soft
warning before the refusal, which counts as `exceeded`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from application.errors import ApplicationError
from application.model_calls.budget_hold import BudgetHold
from application.ports.budget_reservations import Allowance
from domain.billing.model_calls import Budget
from domain.billing.money import usd

if TYPE_CHECKING:
    from application.model_calls.cost_estimate import CostEstimate
    from application.ports.budget_reservations import BudgetReservations
    from application.ports.limit_metrics import LimitMetrics
    from application.ports.model_call_ledger import ModelCallLedger
    from application.ports.runtime import Clock
    from domain.agents.config import AgentConfig

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
    lease: float = 30.0  # seconds a reservation outlives its holder's last renewal


@dataclass(frozen=True, slots=True)
class _Limit:
    """One budget of one period, as the ledger left it."""

    scope: str
    period: str
    limit: float
    spent: float
    read_at: float
    key: str


class CheckBudgets:
    def __init__(
        self, ledger: ModelCallLedger, clock: Clock, metrics: LimitMetrics, policy: BudgetPolicy,
        reservations: BudgetReservations | None = None, estimate: CostEstimate | None = None,
    ) -> None:
        self._ledger = ledger
        self._clock = clock
        self._metrics = metrics
        self._policy = policy
        self._reservations = reservations  # None: spend sums alone (turns arriving together all pass)
        self._estimate = estimate
        self._sums: dict[tuple[str, str | None, datetime], tuple[float, float, float]] = {}

    async def for_turn(
        self, owner: str, agent_id: str, config: AgentConfig, query: str, holder: str
    ) -> BudgetHold | None:
        """The turn's reservation (None when no budget applies); raises `BudgetExceeded`."""
        if not self._applies(config.budget):
            return None
        estimate = self._estimate.turn(config, query) if self._estimate is not None else 0.0
        return await self(owner, agent_id, config.budget, holder=holder, estimate=estimate)

    async def for_upkeep(self, owner: str, config: AgentConfig, holder: str) -> BudgetHold | None:
        """The upkeep's reservation (None when no budget applies); raises `BudgetExceeded`."""
        if not self._applies(config.budget):
            return None
        estimate = self._estimate.upkeep(config) if self._estimate is not None else 0.0
        return await self(owner, config.app_id, config.budget, holder=holder, estimate=estimate)

    async def __call__(
        self, owner: str, agent_id: str, agent_budget: Budget, *, holder: str = "", estimate: float = 0.0
    ) -> BudgetHold | None:
        """Raises `BudgetExceeded` when a budget of the account or of the agent has no room left
        (the account's first), and `StoreUnavailable` (or `EventStoreUnavailable`, for the
        reservations) when it cannot be read. The reservation of `estimate` USD for `holder`, or
        None when no budget applies or there are no reservations."""
        if not self._applies(agent_budget):
            return None
        limits = await self._limits(owner, agent_id, agent_budget)
        for limit in limits:
            self._observe(limit, agent_id)
            if limit.spent >= limit.limit:
                self._refuse(limit, agent_id)
        if self._reservations is None or not limits:
            return None
        now = self._clock.now().timestamp()
        allowances = [Allowance(limit.key, limit.limit - limit.spent, limit.read_at) for limit in limits]
        refused = await self._reservations.reserve(holder, estimate, allowances, now, self._policy.lease)
        if refused is not None:
            self._refuse(limits[refused], agent_id)
        return BudgetHold(self._reservations, self._clock, holder, [limit.key for limit in limits], estimate,
                          (self._policy.lease, self._policy.cache_ttl))

    def _applies(self, agent_budget: Budget) -> bool:
        return self._policy.account.is_set or agent_budget.is_set

    async def _limits(self, owner: str, agent_id: str, agent_budget: Budget) -> list[_Limit]:
        now = self._clock.now().astimezone(UTC)
        day = now.replace(hour=0, minute=0, second=0, microsecond=0)
        periods = ((DAILY, day), (MONTHLY, day.replace(day=1)))
        limits = []
        for scope, budget, agent in ((ACCOUNT, self._policy.account, None), (AGENT, agent_budget, agent_id)):
            for period, since in periods:
                limit = budget.daily_usd if period == DAILY else budget.monthly_usd
                if limit is not None:
                    spent, read_at = await self._spent(owner, agent, since)
                    key = f"{scope}:{owner}:{agent or ''}:{period}:{since.date().isoformat()}"
                    limits.append(_Limit(scope, period, limit, spent, read_at, key))
        return limits

    def _observe(self, limit: _Limit, agent_id: str) -> None:
        ratio = limit.spent / limit.limit if limit.limit > 0 else 1.0
        label = f"{limit.scope}_{limit.period}"
        self._metrics.budget_used(label, agent_id, ratio)
        if ratio < 1.0 and ratio >= self._policy.warn_at:
            self._metrics.budget_alert(label, agent_id, WARNING)

    def _refuse(self, limit: _Limit, agent_id: str) -> None:
        self._metrics.budget_alert(f"{limit.scope}_{limit.period}", agent_id, EXCEEDED)
        whose = "account" if limit.scope == ACCOUNT else f"agent {agent_id!r}"
        held = "" if limit.spent >= limit.limit else ", and turns running now hold the rest"
        raise BudgetExceeded(
            f"The {limit.period} budget of this {whose} is spent: {usd(limit.spent)} of {usd(limit.limit)} USD"
            f"{held}. Turns are refused until the {'day' if limit.period == DAILY else 'month'} ends (UTC) "
            "or the budget is raised."
        )

    async def _spent(self, owner: str, agent_id: str | None, since: datetime) -> tuple[float, float]:
        """What was spent since `since`, and when the ledger was read (epoch seconds)."""
        key = (owner, agent_id, since)
        now = self._clock.monotonic()
        cached = self._sums.get(key)
        if cached is not None and now - cached[1] < self._policy.cache_ttl:
            return cached[0], cached[2]
        read_at = self._clock.now().timestamp()  # before the read: a cost settled after it may be missing
        spent = await self._ledger.spent(owner, since, agent_id)
        if len(self._sums) >= CACHED_SUMS:
            self._sums.clear()  # old periods' sums: dropping them all costs one query each
        self._sums[key] = (spent, now, read_at)
        return spent, read_at
