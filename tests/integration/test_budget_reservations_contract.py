"""The BudgetReservations contract, run against every adapter: in process, and Redis (the real one).

Times are the caller's (the port takes `now`), so leases and lingers pass without waiting.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

import pytest

from application.errors import EventStoreUnavailable
from application.ports.budget_reservations import Allowance
from infrastructure.limits.inprocess_budget_reservations import InProcessBudgetReservations
from infrastructure.limits.redis_budget_reservations import RedisBudgetReservations
from tests.integration.redis_fixtures import dead_redis_client, redis_client  # noqa: F401

if TYPE_CHECKING:
    from application.ports.budget_reservations import BudgetReservations

pytestmark = pytest.mark.integration

LEASE = 30.0
DAY = "agent:alice:ada:daily:2026-12-07"
MONTH = "agent:alice:ada:monthly:2026-12-01"


@pytest.fixture(params=["inprocess", "redis"])
def reservations(request: pytest.FixtureRequest) -> BudgetReservations:
    if request.param == "inprocess":
        return InProcessBudgetReservations()
    return RedisBudgetReservations(request.getfixturevalue("redis_client"))


@pytest.fixture
def t0() -> float:
    """Now: Redis expires keys by its own clock, so each test's times start from the moment it runs."""
    return time.time()


def room(usd: float, key: str = DAY, read_at: float = 0.0) -> Allowance:
    return Allowance(key, usd, read_at)


async def test_reservations_are_taken_while_what_is_held_is_below_the_room(
    reservations: BudgetReservations, t0: float
) -> None:
    held = [await reservations.reserve(f"t{n}", 0.4, [room(1.0)], t0, LEASE) for n in range(4)]
    assert held == [None, None, None, 0]  # 0, 0.4 and 0.8 held are below 1.0; 1.2 is not


async def test_a_reservation_is_taken_under_every_budget_or_under_none(
    reservations: BudgetReservations, t0: float
) -> None:
    assert await reservations.reserve("t1", 0.5, [room(10.0), room(0.5, MONTH)], t0, LEASE) is None
    assert await reservations.reserve("t2", 0.5, [room(10.0), room(0.5, MONTH)], t0, LEASE) == 1
    # The refused one took nothing from the day's budget: beside t1's 0.5 alone, one more 0.1 fits under 0.6.
    assert await reservations.reserve("t3", 0.1, [room(0.6)], t0, LEASE) is None
    assert await reservations.reserve("t4", 0.1, [room(0.6)], t0, LEASE) == 0


async def test_a_reservation_lapses_with_its_lease_unless_renewed(reservations: BudgetReservations, t0: float) -> None:
    await reservations.reserve("dead", 1.0, [room(1.0)], t0, LEASE)
    await reservations.reserve("alive", 1.0, [room(2.0, MONTH)], t0, LEASE)
    await reservations.renew("alive", [MONTH], t0 + 20, LEASE)
    later = t0 + LEASE + 1
    assert await reservations.reserve("next", 1.0, [room(1.0)], later, LEASE) is None  # the dead one's lapsed
    assert await reservations.reserve("other", 1.0, [room(1.0, MONTH)], later, LEASE) == 0  # renewed: still held


async def test_a_settled_cost_counts_only_against_sums_read_before_it(
    reservations: BudgetReservations, t0: float
) -> None:
    await reservations.reserve("t1", 0.9, [room(1.0)], t0, LEASE)
    await reservations.settle("t1", 0.3, [DAY], t0 + 5, 10.0)
    # A sum read before the settlement lacks its 0.3: it still counts (0.3 of 0.35 left leaves room).
    assert await reservations.reserve("t2", 0.1, [room(0.35, read_at=t0 + 4)], t0 + 6, LEASE) is None
    assert await reservations.reserve("t3", 0.1, [room(0.35, read_at=t0 + 4)], t0 + 6, LEASE) == 0
    await reservations.release("t2", [DAY])
    # A sum read after it has it already: only what is reserved counts.
    assert await reservations.reserve("t4", 0.1, [room(0.05, read_at=t0 + 5.5)], t0 + 6, LEASE) is None
    # Past its linger it counts against nothing.
    await reservations.release("t4", [DAY])
    assert await reservations.reserve("t5", 0.1, [room(0.01, read_at=t0)], t0 + 16, LEASE) is None


async def test_a_released_reservation_frees_its_room_at_once(reservations: BudgetReservations, t0: float) -> None:
    await reservations.reserve("t1", 1.0, [room(1.0), room(1.0, MONTH)], t0, LEASE)
    await reservations.release("t1", [DAY, MONTH])
    assert await reservations.reserve("t2", 1.0, [room(1.0), room(1.0, MONTH)], t0, LEASE) is None


async def test_of_many_reserving_at_once_only_those_with_room_are_held(
    reservations: BudgetReservations, t0: float
) -> None:
    results = await asyncio.gather(*(reservations.reserve(f"t{n}", 0.25, [room(2.5)], t0, LEASE) for n in range(60)))
    assert sum(1 for r in results if r is None) == 10


async def test_redis_down_is_an_unavailable_event_store(t0: float) -> None:
    with pytest.raises(EventStoreUnavailable):
        await RedisBudgetReservations(dead_redis_client()).reserve("t1", 0.1, [room(1.0)], t0, LEASE)
