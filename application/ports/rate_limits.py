"""The counters behind rate limits and quotas, shared by every worker that uses the same store.

A turn is admitted against one `Quota` per scope (its key's, its agent's) at once: either every
limit of every quota has room, and the turn counts one request and holds one running-turn slot in
each, or nothing is counted and the first limit reached is named. A slot is a lease: the running
turn renews it, and a worker that died without giving it back loses it when the lease lapses.
Times are seconds since the epoch, from the caller's clock; days are UTC days.
Raises `EventStoreUnavailable` when the store fails.
"""

from dataclasses import dataclass
from typing import Protocol

from domain.accounts.rate_limits import LimitName, LimitScope, RateLimits

RPM_WINDOW = 60.0  # seconds: `rpm` counts the turns admitted in any window this long
DAY = 86400.0
SLOT_RETRY = 1.0  # seconds a client refused a running-turn slot is told to wait: turns end at any time


@dataclass(frozen=True, slots=True)
class Quota:
    """The limits of one scope's `subject` (a key id, an agent id); each 0 is unlimited."""

    scope: LimitScope
    subject: str
    limits: RateLimits


@dataclass(frozen=True, slots=True)
class Refusal:
    limit: LimitName
    quota: Quota
    retry_after: float  # seconds until the limit has room again, as far as the counters know


class RateLimiter(Protocol):
    async def admit(self, turn: str, quotas: tuple[Quota, ...], now: float, lease: float) -> Refusal | None:
        """Atomically: refuse with the first limit reached (tokens per day, running turns, then
        turns per minute, quota by quota), or count `turn` in each and hold its slot for `lease` s."""
        ...

    async def renew(self, turn: str, quotas: tuple[Quota, ...], now: float, lease: float) -> None:
        """`turn` still runs: its slots are held `lease` seconds more (a slot already lapsed stays lost)."""
        ...

    async def release(self, turn: str, quotas: tuple[Quota, ...], now: float, tokens: int) -> None:
        """`turn` ended: its slots are free, and its `tokens` count for the day of `now`."""
        ...
