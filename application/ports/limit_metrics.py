"""Rate limits and budgets in the operator's metrics: refusals, and how much of a budget is used.

The labels follow `application.ports.metrics`: bounded values only. Recording never fails and never waits.
"""

from typing import Protocol


class LimitMetrics(Protocol):
    def request_limited(self, limit: str, scope: str = "") -> None:
        """A request was refused by the named limit (e.g. rpm, concurrent_turns, tokens_per_day) of a
        `scope` (key, agent; empty where the limit's name says it)."""
        ...

    def budget_used(self, scope: str, agent: str, ratio: float) -> None:
        """A turn of `agent` was checked against a budget (`scope`: account_daily, account_monthly,
        agent_daily, agent_monthly), used at `ratio` (1: spent)."""
        ...

    def budget_alert(self, scope: str, agent: str, level: str) -> None:
        """A turn of `agent` started with a budget nearly spent (`warning`), or was refused (`exceeded`)."""
        ...
