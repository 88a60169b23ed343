"""The RateLimiter contract, run against every adapter: in process, and Redis (the real one).

Times are the caller's (the port takes `now`), so windows, leases and days pass without waiting.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

import pytest

from application.errors import EventStoreUnavailable
from application.ports.rate_limits import DAY, RPM_WINDOW, SLOT_RETRY, Quota
from domain.accounts.rate_limits import LimitName, LimitScope, RateLimits
from infrastructure.limits.inprocess_rate_limiter import InProcessRateLimiter
from infrastructure.limits.redis_rate_limiter import RedisRateLimiter
from tests.integration.redis_fixtures import dead_redis_client, redis_client  # noqa: F401

if TYPE_CHECKING:
    from application.ports.rate_limits import RateLimiter

pytestmark = pytest.mark.integration

# A time of today (UTC), so that the day's token counts Redis keeps have not expired already.
T0 = time.time() // DAY * DAY + 1000.0
LEASE = 30.0


def key(name: str = "k1", **limits: int) -> Quota:
    return Quota(LimitScope.KEY, name, RateLimits(**limits))


def agent(name: str = "a1", **limits: int) -> Quota:
    return Quota(LimitScope.AGENT, name, RateLimits(**limits))


@pytest.fixture(params=["inprocess", "redis"])
def limiter(request: pytest.FixtureRequest) -> RateLimiter:
    if request.param == "inprocess":
        return InProcessRateLimiter()
    return RedisRateLimiter(request.getfixturevalue("redis_client"))


async def admitted(limiter: RateLimiter, turn: str, *quotas: Quota, at: float = T0) -> bool:
    return await limiter.admit(turn, quotas, at, LEASE) is None


async def test_rpm_admits_its_limit_in_any_minute_then_names_when_one_leaves_the_window(
    limiter: RateLimiter,
) -> None:
    quota = key(rpm=2)
    assert await admitted(limiter, "t1", quota, at=T0)
    assert await admitted(limiter, "t2", quota, at=T0 + 10)
    refusal = await limiter.admit("t3", (quota,), T0 + 20, LEASE)
    assert refusal is not None
    assert (refusal.limit, refusal.quota) == (LimitName.RPM, quota)
    assert refusal.retry_after == pytest.approx(RPM_WINDOW - 20)
    assert not await admitted(limiter, "t4", quota, at=T0 + RPM_WINDOW - 0.5)
    assert await admitted(limiter, "t5", quota, at=T0 + RPM_WINDOW + 0.5)  # t1 left the window
    assert not await admitted(limiter, "t6", quota, at=T0 + RPM_WINDOW + 1)


async def test_a_refused_turn_counts_in_no_window(limiter: RateLimiter) -> None:
    quota = key(rpm=1)
    assert await admitted(limiter, "t1", quota, at=T0)
    for n in range(5):
        assert not await admitted(limiter, f"refused{n}", quota, at=T0 + 50 + n)
    assert await admitted(limiter, "t2", quota, at=T0 + RPM_WINDOW + 1)


async def test_running_turns_hold_their_slots_until_released(limiter: RateLimiter) -> None:
    quota = agent(concurrent_turns=2)
    assert await admitted(limiter, "t1", quota)
    assert await admitted(limiter, "t2", quota)
    refusal = await limiter.admit("t3", (quota,), T0 + 1, LEASE)
    assert refusal is not None
    assert (refusal.limit, refusal.retry_after) == (LimitName.CONCURRENT_TURNS, SLOT_RETRY)
    await limiter.release("t1", (quota,), T0 + 2, 0)
    assert await admitted(limiter, "t3", quota, at=T0 + 2)
    assert not await admitted(limiter, "t4", quota, at=T0 + 2)


async def test_a_slot_nobody_renews_lapses_with_its_lease(limiter: RateLimiter) -> None:
    quota = key(concurrent_turns=1)
    assert await admitted(limiter, "dead-worker", quota)
    assert not await admitted(limiter, "t2", quota, at=T0 + LEASE - 1)
    assert await admitted(limiter, "t2", quota, at=T0 + LEASE + 1)


async def test_a_renewed_slot_outlives_its_first_lease(limiter: RateLimiter) -> None:
    quota = key(concurrent_turns=1)
    assert await admitted(limiter, "t1", quota)
    await limiter.renew("t1", (quota,), T0 + 20, LEASE)
    assert not await admitted(limiter, "t2", quota, at=T0 + LEASE + 1)
    assert await admitted(limiter, "t2", quota, at=T0 + 20 + LEASE + 1)


async def test_a_lapsed_slot_is_not_taken_back_by_a_late_renewal(limiter: RateLimiter) -> None:
    quota = key(concurrent_turns=1)
    assert await admitted(limiter, "t1", quota)
    assert await admitted(limiter, "t2", quota, at=T0 + LEASE + 1)  # t1's lease lapsed
    await limiter.renew("t1", (quota,), T0 + LEASE + 2, LEASE)
    await limiter.release("t2", (quota,), T0 + LEASE + 3, 0)
    assert await admitted(limiter, "t3", quota, at=T0 + LEASE + 3)


async def test_tokens_per_day_refuse_once_used_up_until_the_next_utc_day(limiter: RateLimiter) -> None:
    quota = key(tokens_per_day=100)
    assert await admitted(limiter, "t1", quota)
    await limiter.release("t1", (quota,), T0 + 1, 60)
    assert await admitted(limiter, "t2", quota, at=T0 + 2)
    await limiter.release("t2", (quota,), T0 + 3, 50)  # the turn that crosses the limit ran to its end
    refusal = await limiter.admit("t3", (quota,), T0 + 4, LEASE)
    assert refusal is not None
    assert refusal.limit is LimitName.TOKENS_PER_DAY
    assert refusal.retry_after == pytest.approx(DAY - 1004)
    assert await admitted(limiter, "t4", quota, at=T0 + DAY)


async def test_tokens_count_only_where_a_daily_limit_is_set(limiter: RateLimiter) -> None:
    counted, uncounted = key("k1", tokens_per_day=100), key("k2", rpm=1000)
    assert await admitted(limiter, "t1", counted, uncounted)
    await limiter.release("t1", (counted, uncounted), T0 + 1, 100)
    assert not await admitted(limiter, "t2", counted, at=T0 + 2)
    assert await admitted(limiter, "t3", key("k2", tokens_per_day=100), at=T0 + 2)


async def test_scopes_and_subjects_count_apart(limiter: RateLimiter) -> None:
    assert await admitted(limiter, "t1", key("k1", rpm=1))
    assert await admitted(limiter, "t2", key("k2", rpm=1))
    assert await admitted(limiter, "t3", agent("k1", rpm=1))
    assert not await admitted(limiter, "t4", key("k1", rpm=1))


async def test_the_first_limit_reached_is_named_and_the_other_quotas_count_nothing(limiter: RateLimiter) -> None:
    own, shared = key("k1", rpm=1), agent("a1", concurrent_turns=1)
    assert await admitted(limiter, "t1", key("k2"), shared)
    refusal = await limiter.admit("t2", (own, shared), T0 + 1, LEASE)
    assert refusal is not None
    assert (refusal.limit, refusal.quota) == (LimitName.CONCURRENT_TURNS, shared)
    assert await admitted(limiter, "t3", own, at=T0 + 2)  # t2 took nothing of `own`'s minute


async def test_a_turn_refused_for_tokens_is_named_before_its_other_limits(limiter: RateLimiter) -> None:
    quota = key(rpm=1, concurrent_turns=1, tokens_per_day=10)
    assert await admitted(limiter, "t1", quota)
    await limiter.release("t1", (quota,), T0 + 1, 10)
    refusal = await limiter.admit("t2", (quota,), T0 + 2, LEASE)
    assert refusal is not None
    assert refusal.limit is LimitName.TOKENS_PER_DAY


async def test_unlimited_quotas_never_refuse(limiter: RateLimiter) -> None:
    quota = key(rpm=0, concurrent_turns=0, tokens_per_day=0)
    for n in range(50):
        assert await admitted(limiter, f"t{n}", quota, at=T0 + n * 0.01)
    await limiter.release("t0", (quota,), T0 + 1, 10**9)
    assert await admitted(limiter, "last", quota, at=T0 + 2)


async def test_simultaneous_admissions_never_take_more_slots_than_the_limit(limiter: RateLimiter) -> None:
    quota = agent(concurrent_turns=3, rpm=5)
    results = await asyncio.gather(*(limiter.admit(f"t{n}", (quota,), T0, LEASE) for n in range(20)))
    assert sum(result is None for result in results) == 3


async def test_a_redis_that_is_down_is_an_event_store_failure() -> None:
    limiter = RedisRateLimiter(dead_redis_client())
    with pytest.raises(EventStoreUnavailable):
        await limiter.admit("t1", (key(rpm=1),), T0, LEASE)
