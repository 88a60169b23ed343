"""Rate limits and quotas of turns: how many may start per minute, run at once, and consume per day.

Each applies to a scope, a key or an agent (`LimitScope`), and is named by `LimitName` in answers
and in the metrics. A value of 0 is unlimited; None (in an agent's config) is "not set here": the
settings' default for agents applies.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from domain.errors import DomainError

MAX_LIMIT = 10**12  # larger is unlimited in all but name; bounded so that every store can hold it


class LimitName(StrEnum):
    RPM = "rpm"  # turns started in any 60 seconds
    CONCURRENT_TURNS = "concurrent_turns"  # turns running at once
    TOKENS_PER_DAY = "tokens_per_day"  # tokens of the turns that ended this UTC day


class LimitScope(StrEnum):
    KEY = "key"  # one API key (a request without a key: its account)
    AGENT = "agent"  # one agent, whoever calls it


@dataclass(frozen=True, slots=True)
class RateLimits:
    rpm: int | None = None
    concurrent_turns: int | None = None
    tokens_per_day: int | None = None

    def __post_init__(self) -> None:
        for name in LimitName:
            value = getattr(self, name.value)
            if value is not None and not 0 <= value <= MAX_LIMIT:
                raise DomainError(f"limits.{name.value} must be within 0..{MAX_LIMIT} (0: unlimited)")

    def over(self, defaults: RateLimits) -> RateLimits:
        """These limits, with `defaults` where one is not set."""
        return RateLimits(*(getattr(self, n.value) if getattr(self, n.value) is not None
                            else getattr(defaults, n.value) for n in LimitName))

    def of(self, name: LimitName) -> int:
        """The limit `name` (0: unlimited, also when not set)."""
        return getattr(self, name.value) or 0

    @property
    def limited(self) -> bool:
        return any(self.of(name) for name in LimitName)


def refusal_message(name: LimitName, scope: LimitScope, limit: int, retry_after: int) -> str:
    """What a refused client reads: which limit, never whose key or which user."""
    whose = "This API key" if scope is LimitScope.KEY else "This agent"
    wait = f"retry in {retry_after} s"
    if name is LimitName.RPM:
        return f"{whose} has reached its limit of turns per minute ({limit}); {wait}."
    if name is LimitName.CONCURRENT_TURNS:
        return f"{whose} already runs its limit of concurrent turns ({limit}); {wait}, once one has ended."
    return f"{whose} has used its tokens for today ({limit}, UTC); {wait}, when the day ends."
