"""TurnQuota: a turn's rate limits and quotas, checked before it starts and held while it runs.

Two scopes limit a turn: its API key (a request without a key, in single-user mode or over MCP,
counts under its account) with the settings' key limits, and its agent with the limits of the
config the turn runs, over the settings' agent limits. `rpm` counts the turns started, not every
request: reading a conversation or following a stream never spends it.

The check comes before the query is stored, like the input's validation: a refused turn never
started, so there is nothing to keep (docs/ARCHITECTURE.md §3 step 1). Once admitted, the turn
holds a running-turn slot in each scope, renewed every third of a lease and given back however it
ends; a worker that dies loses its slots when the lease lapses. Its tokens count when it ends, so
the one turn that crosses `tokens_per_day` runs to its end: the next one is refused.
"""

from __future__ import annotations

import asyncio
import logging
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from application.errors import ApplicationError, RateLimited
from application.ports.rate_limits import Quota
from domain.accounts.rate_limits import LimitScope, RateLimits, refusal_message

if TYPE_CHECKING:
    from collections.abc import Awaitable

    from application.model_calls.budget_hold import BudgetHold
    from application.ports.limit_metrics import LimitMetrics
    from application.ports.rate_limits import RateLimiter
    from application.ports.runtime import Clock
    from domain.conversations.messages import Usage
    from domain.ids import AppId, OwnerId, TaskId

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class QuotaDefaults:
    key: RateLimits = field(default_factory=RateLimits)
    agent: RateLimits = field(default_factory=RateLimits)
    lease: float = 30.0  # seconds a running turn's slot outlives the last renewal of its worker


class Admission:
    """A turn's hold on its slots and its budget reservation: renewed while it runs (`hold`),
    given back once (`end`)."""

    def __init__(
        self, quota: TurnQuota | None = None, turn: TaskId | None = None, quotas: tuple[Quota, ...] = (),
        budget: BudgetHold | None = None,
    ) -> None:
        self._quota, self._turn, self._quotas, self._budget = quota, turn, quotas, budget
        self._ended = False

    def reserving(self, budget: BudgetHold | None) -> Admission:
        """This admission, also holding the turn's budget reservation."""
        return self if budget is None else Admission(self._quota, self._turn, self._quotas, budget)

    async def hold(self, work: Awaitable[None]) -> None:
        """Runs `work` (the turn), renewing the slots and the reservation, and gives them back however it ends."""
        renewals = []
        if self._quota is not None and self._turn is not None:
            renewals.append(asyncio.create_task(self._quota.renew_while(self._turn, self._quotas)))
        if self._budget is not None:
            renewals.append(asyncio.create_task(self._budget.renew_while()))
        try:
            await work
        finally:
            for renewing in renewals:
                renewing.cancel()
            await self.end(ran=True)

    async def end(self, usage: Usage | None = None, ran: bool = False) -> None:
        """The turn ended, having consumed `usage` (None: unknown): its slots are free, and its
        reservation is settled at its price; at the estimate when a turn that `ran` has no usage
        (it failed before its end), released when it never ran."""
        if self._ended:
            return
        self._ended = True
        if self._budget is not None:
            cost = usage.price if usage is not None else self._budget.estimate if ran else None
            await self._budget.end(cost, written=usage is not None)
        if self._quota is not None and self._turn is not None:
            await self._quota.release(self._turn, self._quotas, usage.total_tokens if usage is not None else 0)


NO_LIMITS = Admission()  # a turn no limit applies to (and one built outside StartChatTurn)


class TurnQuota:
    def __init__(self, limiter: RateLimiter, defaults: QuotaDefaults, clock: Clock, metrics: LimitMetrics) -> None:
        self._limiter = limiter
        self._defaults = defaults
        self._clock = clock
        self._metrics = metrics

    async def admit(
        self, key_id: str | None, owner: OwnerId, turn: TaskId, agent: AppId, limits: RateLimits
    ) -> Admission:
        """The turn's admission, for the API key `key_id` (None: a request without one counts under
        its account); raises `RateLimited` naming the first limit reached."""
        key = key_id or f"account:{owner}"
        quotas = tuple(quota for quota in (
            Quota(LimitScope.KEY, key, self._defaults.key),
            # Per owner: the default agent is the platform's, shared by every account, and one
            # account's turns must not use up another's.
            Quota(LimitScope.AGENT, f"{owner}:{agent}", limits.over(self._defaults.agent)),
        ) if quota.limits.limited)
        if not quotas:  # no limit set: no store is asked
            return NO_LIMITS
        refusal = await self._limiter.admit(turn, quotas, self._now(), self._defaults.lease)
        if refusal is None:
            return Admission(self, turn, quotas)
        scope = refusal.quota.scope
        self._metrics.request_limited(refusal.limit.value, scope.value)
        seconds = max(1, math.ceil(refusal.retry_after))
        limit = refusal.quota.limits.of(refusal.limit)
        raise RateLimited(refusal_message(refusal.limit, scope, limit, seconds), seconds)

    async def release(self, turn: TaskId, quotas: tuple[Quota, ...], tokens: int) -> None:
        """Frees the slots and counts `tokens`; a failure only leaves the slots to lapse."""
        try:
            await self._limiter.release(turn, quotas, self._now(), tokens)
        except ApplicationError as failure:
            log.warning("turn %s: its rate-limit slots lapse with their lease, and its %d tokens were not "
                        "counted: %s", turn, tokens, failure.message)

    async def renew_while(self, turn: TaskId, quotas: tuple[Quota, ...]) -> None:
        """Renews the slots every third of a lease, until cancelled."""
        lease = self._defaults.lease
        while True:
            await asyncio.sleep(lease / 3)
            try:
                await self._limiter.renew(turn, quotas, self._now(), lease)
            except ApplicationError as failure:  # the next renewal may get through before the lease lapses
                log.warning("turn %s: its rate-limit slots were not renewed: %s", turn, failure.message)

    def _now(self) -> float:
        return self._clock.now().timestamp()
