"""BudgetHold: what one turn (or one upkeep) reserved against its budgets, until its cost is known.

It is renewed while its work runs, so a worker that dies leaves only a reservation that lapses with
its lease. It ends once: settled with the cost the work had (a turn's priced usage, or the estimate
where the cost is not known here), or released when the work never ran. The settled cost still
counts against spend sums read before the ledger could hold it: for one cache period after its
writer had time to write it (application/ports/budget_reservations.py).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, TypeVar

from application.errors import ApplicationError

if TYPE_CHECKING:
    from collections.abc import Awaitable, Sequence

    from application.ports.budget_reservations import BudgetReservations
    from application.ports.runtime import Clock

log = logging.getLogger(__name__)
T = TypeVar("T")

WRITER_LAG = 2.0  # seconds the ledger's writer may take to write a call (its batches are a moment apart)


class BudgetHold:
    def __init__(
        self, reservations: BudgetReservations, clock: Clock, holder: str, keys: Sequence[str],
        estimate: float, times: tuple[float, float],
    ) -> None:
        self._reservations, self._clock = reservations, clock
        self._holder, self._keys, self.estimate = holder, tuple(keys), estimate
        self._lease, self._cache_ttl = times
        self._ended = False

    async def renew_while(self) -> None:
        """Renews the reservation every third of a lease, until cancelled."""
        while True:
            await asyncio.sleep(self._lease / 3)
            try:
                await self._reservations.renew(self._holder, self._keys, self._now(), self._lease)
            except ApplicationError as failure:  # the next renewal may get through before the lease lapses
                log.warning("%s: its budget reservation was not renewed: %s", self._holder, failure.message)

    async def during(self, work: Awaitable[T]) -> T:
        """Runs `work`, renewing the reservation, then settles it at the estimate."""
        renewing = asyncio.create_task(self.renew_while())
        try:
            return await work
        finally:
            renewing.cancel()
            await self.end(self.estimate, written=False)

    async def end(self, cost: float | None, written: bool = True) -> None:
        """The work ended having cost `cost` USD (None: it never ran); `written`: the ledger holds
        its calls already (a turn's are saved with its outcome), else its writer has them. Never raises."""
        if self._ended:
            return
        self._ended = True
        try:
            if cost is None:
                await self._reservations.release(self._holder, self._keys)
            else:
                settled_at = self._now() + (0.0 if written else WRITER_LAG)
                await self._reservations.settle(self._holder, cost, self._keys, settled_at,
                                                self._cache_ttl + WRITER_LAG)
        except ApplicationError as failure:
            log.warning("%s: its budget reservation lapses with its lease: %s", self._holder, failure.message)

    def _now(self) -> float:
        return self._clock.now().timestamp()
