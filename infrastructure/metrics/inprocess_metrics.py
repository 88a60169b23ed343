"""Metrics kept in this process, as a list of what was recorded: the port's test double, and what
`Metrics` callers are checked against (tests/unit), without a Prometheus registry."""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.ports.metrics import Metrics

if TYPE_CHECKING:
    from application.ports.model_metrics import ModelOutcome, ModelPurpose
    from domain.conversations.messages import Usage


class InProcessMetrics(Metrics):
    def __init__(self) -> None:
        self.recorded: list[tuple[str, tuple[object, ...]]] = []  # (method, its arguments), in order
        self.active_turns = 0
        self.active_streams = 0

    def of(self, what: str) -> list[tuple[object, ...]]:
        """The arguments of every recording of `what` (a method's name), in order."""
        return [arguments for name, arguments in self.recorded if name == what]

    def turn_started(self, agent: str, profile: str) -> None:
        self.active_turns += 1
        self.recorded.append(("turn_started", (agent, profile)))

    def turn_ended(self, agent: str, profile: str, status: str, seconds: float) -> None:
        self.active_turns -= 1
        self.recorded.append(("turn_ended", (agent, profile, status, seconds)))

    def first_token(self, agent: str, profile: str, seconds: float) -> None:
        self.recorded.append(("first_token", (agent, profile, seconds)))

    def model_call(self, purpose: ModelPurpose, profile: str, outcome: ModelOutcome, usage: Usage | None) -> None:
        self.recorded.append(("model_call", (purpose, profile, outcome, usage)))

    def tool_call(self, tool: str, outcome: str) -> None:
        self.recorded.append(("tool_call", (tool, outcome)))

    def event_appended(self, seconds: float) -> None:
        self.recorded.append(("event_appended", (seconds,)))

    def store_error(self, store: str) -> None:
        self.recorded.append(("store_error", (store,)))

    def stream_opened(self) -> None:
        self.active_streams += 1
        self.recorded.append(("stream_opened", ()))

    def stream_closed(self) -> None:
        self.active_streams -= 1
        self.recorded.append(("stream_closed", ()))

    def upkeep_lag(self, seconds: float) -> None:
        self.recorded.append(("upkeep_lag", (seconds,)))

    def request_limited(self, limit: str, scope: str = "") -> None:
        self.recorded.append(("request_limited", (limit, scope)))

    def budget_used(self, scope: str, agent: str, ratio: float) -> None:
        self.recorded.append(("budget_used", (scope, agent, ratio)))

    def budget_alert(self, scope: str, agent: str, level: str) -> None:
        self.recorded.append(("budget_alert", (scope, agent, level)))
