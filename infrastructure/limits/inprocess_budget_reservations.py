"""Budget reservations in this process: the embedded default (one worker) and the port's test double.

Each call runs without an await in between, so under asyncio it is as atomic as the Redis script.
Memory stays bounded by the holders in flight: an entry goes when its lease or linger passes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from application.ports.budget_reservations import Allowance, BudgetReservations

if TYPE_CHECKING:
    from collections.abc import Sequence


@dataclass(frozen=True, slots=True)
class _Held:
    amount: float
    until: float  # when it lapses
    settled_at: float = 0.0  # 0: still a reservation


class InProcessBudgetReservations(BudgetReservations):
    def __init__(self) -> None:
        self._held: dict[str, dict[str, _Held]] = {}  # budget key → holder → what it holds

    async def reserve(
        self, holder: str, amount: float, allowances: Sequence[Allowance], now: float, lease: float
    ) -> int | None:
        for index, allowance in enumerate(allowances):
            if self._holding(allowance, now) >= allowance.room:
                return index
        for allowance in allowances:
            self._held.setdefault(allowance.key, {})[holder] = _Held(amount, now + lease)
        return None

    async def renew(self, holder: str, keys: Sequence[str], now: float, lease: float) -> None:
        for key in keys:
            held = self._held.get(key, {}).get(holder)
            if held is not None and not held.settled_at and held.until > now:
                self._held[key][holder] = _Held(held.amount, now + lease)

    async def settle(self, holder: str, cost: float, keys: Sequence[str], now: float, linger: float) -> None:
        for key in keys:
            self._held.setdefault(key, {})[holder] = _Held(cost, now + linger, now)

    async def release(self, holder: str, keys: Sequence[str]) -> None:
        for key in keys:
            self._held.get(key, {}).pop(holder, None)

    def _holding(self, allowance: Allowance, now: float) -> float:
        entries = self._held.get(allowance.key, {})
        for holder in [h for h, held in entries.items() if held.until <= now]:
            del entries[holder]
        if not entries:
            self._held.pop(allowance.key, None)
        return sum(
            held.amount for held in entries.values() if not held.settled_at or held.settled_at > allowance.read_at
        )
