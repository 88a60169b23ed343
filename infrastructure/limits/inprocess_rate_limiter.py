"""Rate-limit counters in this process: the embedded default (one worker) and the port's test double.

Each call runs without an await in between, so under asyncio it is as atomic as the Redis script.
Memory stays bounded by the scopes in use: old minutes and days are dropped as they pass.
"""

from __future__ import annotations

from collections import defaultdict, deque

from application.ports.rate_limits import DAY, RPM_WINDOW, SLOT_RETRY, Quota, RateLimiter, Refusal
from domain.accounts.rate_limits import LimitName

Scope = tuple[str, str]  # (scope, subject)


def _scope(quota: Quota) -> Scope:
    return quota.scope.value, quota.subject


class InProcessRateLimiter(RateLimiter):
    def __init__(self) -> None:
        self._admitted: defaultdict[Scope, deque[float]] = defaultdict(deque)  # times, oldest first
        self._slots: defaultdict[Scope, dict[str, float]] = defaultdict(dict)  # turn → lease's end
        self._tokens: dict[Scope, tuple[int, int]] = {}  # (day number, tokens that day)

    async def admit(self, turn: str, quotas: tuple[Quota, ...], now: float, lease: float) -> Refusal | None:
        for quota in quotas:
            refusal = self._refusal(quota, now)
            if refusal is not None:
                return refusal
        for quota in quotas:
            scope = _scope(quota)
            if quota.limits.of(LimitName.RPM):
                self._admitted[scope].append(now)
            if quota.limits.of(LimitName.CONCURRENT_TURNS):
                self._slots[scope][turn] = now + lease
        return None

    def _refusal(self, quota: Quota, now: float) -> Refusal | None:
        scope, limits = _scope(quota), quota.limits
        tokens_limit = limits.of(LimitName.TOKENS_PER_DAY)
        if tokens_limit and self._used(scope, now) >= tokens_limit:
            return Refusal(LimitName.TOKENS_PER_DAY, quota, DAY - now % DAY)
        slots_limit = limits.of(LimitName.CONCURRENT_TURNS)
        if slots_limit:
            slots = self._slots[scope]
            for lapsed in [turn for turn, until in slots.items() if until <= now]:
                del slots[lapsed]
            if len(slots) >= slots_limit:
                return Refusal(LimitName.CONCURRENT_TURNS, quota, SLOT_RETRY)
        rpm_limit = limits.of(LimitName.RPM)
        if rpm_limit:
            admitted = self._admitted[scope]
            while admitted and admitted[0] <= now - RPM_WINDOW:
                admitted.popleft()
            if len(admitted) >= rpm_limit:
                return Refusal(LimitName.RPM, quota, admitted[-rpm_limit] + RPM_WINDOW - now)
        return None

    async def renew(self, turn: str, quotas: tuple[Quota, ...], now: float, lease: float) -> None:
        for quota in quotas:
            slots = self._slots.get(_scope(quota), {})
            if slots.get(turn, now) > now:
                slots[turn] = now + lease

    async def release(self, turn: str, quotas: tuple[Quota, ...], now: float, tokens: int) -> None:
        for quota in quotas:
            scope = _scope(quota)
            slots = self._slots.get(scope)
            if slots is not None:
                slots.pop(turn, None)
                if not slots:
                    del self._slots[scope]
            if quota.limits.of(LimitName.TOKENS_PER_DAY) and tokens:
                self._tokens[scope] = (int(now // DAY), self._used(scope, now) + tokens)

    def _used(self, scope: Scope, now: float) -> int:
        day, used = self._tokens.get(scope, (-1, 0))
        return used if day == int(now // DAY) else 0
