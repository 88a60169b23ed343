"""CheckReadiness: each part's state, ready only when every part is; the checks run at most once per
10 s on the injected clock, once for requests that come together, and a part that hangs is `timeout`."""

from __future__ import annotations

import asyncio

from application.health.check_readiness import CheckReadiness
from application.ports.readiness import OK, REJECTED, TIMEOUT, UNCHECKED, UNREACHABLE, ReadinessProbe
from infrastructure.models.model_readiness import FixedProbe
from tests.fakes import FakeClock


class SwitchedProbe(ReadinessProbe):
    """A part whose state the test sets, counting how often it is asked."""

    def __init__(self, part: str, state: str = OK, delay: float = 0.0) -> None:
        self._part = part
        self.now = state
        self.delay = delay
        self.asked = 0

    @property
    def part(self) -> str:
        return self._part

    async def state(self) -> str:
        self.asked += 1
        await asyncio.sleep(self.delay)
        return self.now


async def test_every_part_ok_or_unchecked_is_ready_with_each_part_named_in_order() -> None:
    check = CheckReadiness([SwitchedProbe("database"), SwitchedProbe("redis"), FixedProbe("model:as", UNCHECKED),
                            FixedProbe("model:default", OK)], FakeClock(step=0))
    readiness = await check()
    assert readiness.ready
    assert list(readiness.checks.items()) == [
        ("database", OK), ("redis", OK), ("model:as", UNCHECKED), ("model:default", OK),
    ]
    assert readiness.failing == {}


async def test_one_failing_part_makes_it_not_ready_and_is_named() -> None:
    check = CheckReadiness([SwitchedProbe("database"), SwitchedProbe("redis", UNREACHABLE),
                            SwitchedProbe("model:fast", REJECTED)], FakeClock(step=0))
    readiness = await check()
    assert not readiness.ready
    assert readiness.failing == {"redis": UNREACHABLE, "model:fast": REJECTED}
    assert readiness.checks["database"] == OK


async def test_the_checks_run_at_most_once_per_ten_seconds() -> None:
    clock, redis = FakeClock(step=0), SwitchedProbe("redis")
    check = CheckReadiness([redis], clock)
    assert (await check()).ready
    redis.now = UNREACHABLE
    clock.advance(9.9)
    assert (await check()).ready  # the answer of 9.9 s ago
    assert redis.asked == 1
    clock.advance(0.1)
    assert (await check()).failing == {"redis": UNREACHABLE}
    assert redis.asked == 2
    redis.now = OK
    clock.advance(5)
    assert not (await check()).ready  # a failure is kept as long
    clock.advance(5)
    assert (await check()).ready
    assert redis.asked == 3


async def test_requests_that_come_together_share_one_check() -> None:
    database = SwitchedProbe("database", delay=0.05)
    check = CheckReadiness([database], FakeClock(step=0))
    answers = await asyncio.gather(*(check() for _ in range(5)))
    assert database.asked == 1
    assert all(a.ready for a in answers)


async def test_a_part_that_does_not_answer_in_time_is_timeout_and_the_others_still_answer() -> None:
    hanging, database = SwitchedProbe("redis", delay=30), SwitchedProbe("database")
    check = CheckReadiness([database, hanging], FakeClock(step=0), probe_timeout=0.05)
    readiness = await asyncio.wait_for(check(), 5)
    assert readiness.checks == {"database": OK, "redis": TIMEOUT}
