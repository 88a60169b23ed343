"""An agent's usage stats for its owner: a window of UTC days, checked, every day of it present."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import UTC, date, timedelta
from typing import TYPE_CHECKING

from application.agents.access import visible_agent
from application.errors import InvalidInput
from application.ports.usage_stats import DayStats, UsageFigures
from domain.agents.agent import MAX_VERSION

if TYPE_CHECKING:
    from application.ports.agent_store import AgentStore
    from application.ports.runtime import Clock
    from application.ports.usage_stats import UsageReport, UsageStats
    from domain.ids import AppId, OwnerId

DEFAULT_DAYS = 30  # without `from`: the last 30 days, today included
MAX_DAYS = 366  # a leap year; a longer window is a report, not a dashboard
# Exactly YYYY-MM-DD: `date.fromisoformat` would also take 20260101 and week dates.
_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", re.ASCII)


class ReadUsageStats:
    def __init__(self, agents: AgentStore, stats: UsageStats, clock: Clock) -> None:
        self._agents = agents
        self._stats = stats
        self._clock = clock

    async def __call__(
        self, agent_id: AppId, owner: OwnerId, first: str | None = None, last: str | None = None,
        version: int | None = None,
    ) -> UsageReport:
        """The owner's usage of the agent from `first` to `last` (ISO dates, both included; by
        default the last 30 days up to today, UTC). An agent the owner may not see is `NotFound`,
        whatever else is wrong; a bad window or version is `InvalidInput`.

        The platform's agent is visible to every account: each sees only its own turns with it.
        """
        await visible_agent(self._agents, agent_id, owner)
        start, end = self.window(first, last)
        if version is not None and not 1 <= version <= MAX_VERSION:
            raise InvalidInput(f"`version` is a version number from 1 to {MAX_VERSION}, got {version}.")
        report = await self._stats.usage(agent_id, owner, start, end, version)
        return replace(report, days=every_day(report.days, start, end))

    def window(self, first: str | None, last: str | None) -> tuple[date, date]:
        end = parse_day(last, "to") if last is not None else self._clock.now().astimezone(UTC).date()
        start = parse_day(first, "from") if first is not None else end - timedelta(days=DEFAULT_DAYS - 1)
        if end < start:
            raise InvalidInput(f"`to` ({end.isoformat()}) is before `from` ({start.isoformat()}).")
        if (end - start).days + 1 > MAX_DAYS:
            raise InvalidInput(f"A window spans at most {MAX_DAYS} days; this one spans {(end - start).days + 1}.")
        return start, end


def parse_day(text: str, name: str) -> date:
    if _DAY.fullmatch(text):
        try:
            return date.fromisoformat(text)
        except ValueError:
            pass
    raise InvalidInput(f"`{name}` is a date as YYYY-MM-DD, got {text[:40]!r}.")


def every_day(days: tuple[DayStats, ...], start: date, end: date) -> tuple[DayStats, ...]:
    """`days` with the days that had no turn filled in as zeros, oldest first: a chart needs no gaps."""
    found = {d.day: d for d in days}
    empty = UsageFigures()
    span = (end - start).days + 1
    return tuple(
        found.get(day) or DayStats(day, empty) for day in (start + timedelta(days=n) for n in range(span))
    )
