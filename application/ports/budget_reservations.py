"""Budget reservations: what running turns and upkeep are expected to spend, held against the
budgets until the ledger has their cost (application/model_calls/budgets.py).

A holder (a turn's task id, an upkeep's id) reserves its estimate under every budget it spends
from, at once: the reservation is taken only while each budget has room, that is, while what is
held under it is below what the ledger says is left of it. Two workers reserving at the same
moment can never both take the last of a budget.

Times are the caller's (`now`, epoch seconds), as in the rate limiter's port.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from collections.abc import Sequence


@dataclass(frozen=True, slots=True)
class Allowance:
    """One budget a reservation must fit under."""

    key: str  # the budget and its period, e.g. "account:<owner>::daily:2026-12-07"
    room: float  # USD left of it by the ledger's sum (the limit less what was spent)
    read_at: float  # when that sum was read: costs settled before it are in it already


class BudgetReservations(Protocol):
    """Raises `EventStoreUnavailable` when the backend fails."""

    async def reserve(
        self, holder: str, amount: float, allowances: Sequence[Allowance], now: float, lease: float
    ) -> int | None:
        """Holds `amount` under every allowance for `lease` seconds when each has room: what it
        holds (reserved, and settled after its `read_at`) is below its `room`. None when held,
        else the index of the first allowance without room (nothing is held then)."""
        ...

    async def renew(self, holder: str, keys: Sequence[str], now: float, lease: float) -> None:
        """Extends a reservation still held by `lease` seconds; a lapsed one is not taken back."""
        ...

    async def settle(self, holder: str, cost: float, keys: Sequence[str], now: float, linger: float) -> None:
        """The holder's cost is known and in the ledger as of `now`: it replaces the reservation,
        counted against sums read before `now`, for `linger` seconds (sums read since have it)."""
        ...

    async def release(self, holder: str, keys: Sequence[str]) -> None:
        """The holder spent nothing (it never ran): its reservation goes at once."""
        ...
