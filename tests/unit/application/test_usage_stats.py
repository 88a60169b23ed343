"""ReadUsageStats: who may read an agent's stats, which window of days they cover, and that every
day of it is there; the figures themselves are the adapter's (tests/integration/test_usage_stats_contract.py)."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from application.agents.usage_stats import ReadUsageStats
from application.errors import InvalidInput, NotFound
from application.ports.usage_stats import DayStats, UsageFigures, UsageReport, VersionStats
from domain.agents.agent import PLATFORM_OWNER
from domain.agents.config import AgentConfig
from domain.ids import AppId, OwnerId
from tests.fakes import FakeAgentStore, FakeClock

ALICE, MALLORY = OwnerId("alice"), OwnerId("mallory")
ADA = AppId("ada")
TODAY = datetime(2026, 3, 10, 23, 59, tzinfo=UTC)
BUSY = UsageFigures(conversations=2, messages=3, end_users=1, prompt_tokens=10, completion_tokens=5, cost=0.5)


class RecordedStats:
    """The port, answering one busy day (2026-03-05) and recording what it was asked."""

    def __init__(self) -> None:
        self.asked: list[tuple[AppId, OwnerId, date, date, int | None]] = []

    async def usage(
        self, agent_id: AppId, owner: OwnerId, first: date, last: date, version: int | None = None
    ) -> UsageReport:
        self.asked.append((agent_id, owner, first, last, version))
        busy = tuple(DayStats(d, BUSY) for d in (date(2026, 3, 5),) if first <= d <= last)
        return UsageReport(agent_id, first, last, version, BUSY, busy, (VersionStats(1, BUSY),))


def kit(owner: OwnerId = ALICE) -> tuple[ReadUsageStats, RecordedStats]:
    stats = RecordedStats()
    agents = FakeAgentStore.publishing(AgentConfig(app_id=ADA), owner=owner)
    return ReadUsageStats(agents, stats, FakeClock(TODAY, step=0)), stats


async def test_without_a_window_the_stats_cover_the_last_30_days_up_to_today() -> None:
    read, stats = kit()
    report = await read(ADA, ALICE)
    assert stats.asked == [(ADA, ALICE, date(2026, 2, 9), date(2026, 3, 10), None)]
    assert (report.first, report.last, len(report.days)) == (date(2026, 2, 9), date(2026, 3, 10), 30)


async def test_one_end_of_the_window_given_the_other_takes_its_default() -> None:
    read, stats = kit()
    await read(ADA, ALICE, last="2026-01-31")
    await read(ADA, ALICE, first="2026-03-01")
    assert [(a[2], a[3]) for a in stats.asked] == [
        (date(2026, 1, 2), date(2026, 1, 31)), (date(2026, 3, 1), date(2026, 3, 10)),
    ]


async def test_every_day_of_the_window_is_there_oldest_first_and_days_without_turns_are_zeros() -> None:
    read, _ = kit()
    report = await read(ADA, ALICE, "2026-03-03", "2026-03-07")
    assert [d.day.day for d in report.days] == [3, 4, 5, 6, 7]
    assert [d.figures for d in report.days] == [UsageFigures()] * 2 + [BUSY] + [UsageFigures()] * 2
    assert (report.total, report.versions) == (BUSY, (VersionStats(1, BUSY),))


async def test_a_window_of_one_day_and_one_of_366_days_are_taken() -> None:
    read, _ = kit()
    assert len((await read(ADA, ALICE, "2026-03-05", "2026-03-05")).days) == 1
    assert len((await read(ADA, ALICE, "2024-01-01", "2024-12-31")).days) == 366


@pytest.mark.parametrize(
    ("first", "last"),
    [("2026-03-02", "2026-03-01"), ("2025-01-01", "2026-01-02"), ("2026-03-11", None)],
    ids=["to-before-from", "367-days", "from-after-today"],
)
async def test_a_window_that_ends_before_it_starts_or_spans_over_366_days_is_refused(
    first: str, last: str | None
) -> None:
    read, stats = kit()
    with pytest.raises(InvalidInput):
        await read(ADA, ALICE, first, last)
    assert stats.asked == []


@pytest.mark.parametrize(
    "day", ["2026-02-30", "2026-13-01", "20260301", "2026-W10-1", "2026-3-01", "2026-03-01T00:00", "", "٢٠٢٦-٠٣-٠١"]
)
async def test_a_day_that_is_not_a_real_yyyy_mm_dd_date_is_refused(day: str) -> None:
    read, stats = kit()
    for first, last in ((day, "2026-03-10"), ("2026-03-01", day)):
        with pytest.raises(InvalidInput, match="YYYY-MM-DD"):
            await read(ADA, ALICE, first, last)
    assert stats.asked == []


async def test_a_version_is_passed_on_and_one_below_1_is_refused() -> None:
    read, stats = kit()
    await read(ADA, ALICE, version=3)
    assert stats.asked[-1][4] == 3
    for bad in (0, -1, 2**31 + 1):
        with pytest.raises(InvalidInput):
            await read(ADA, ALICE, version=bad)
    assert len(stats.asked) == 1


async def test_another_accounts_agent_or_an_unknown_one_is_not_found_before_anything_else_is_checked() -> None:
    read, stats = kit()
    for agent, owner in ((ADA, MALLORY), (AppId("nobody"), ALICE)):
        with pytest.raises(NotFound):
            await read(agent, owner, "2026-03-02", "2026-03-01", version=0)
    assert stats.asked == []


async def test_the_platforms_agent_shows_each_account_its_own_turns_only() -> None:
    read, stats = kit(owner=PLATFORM_OWNER)
    await read(ADA, MALLORY)
    assert stats.asked[0][:2] == (ADA, MALLORY)
