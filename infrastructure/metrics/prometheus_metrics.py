"""The metrics as Prometheus families, with the official `prometheus-client`.

One process: each instance has its own registry (several apps in one test process never clash).
Several workers: with the library's `PROMETHEUS_MULTIPROC_DIR` set before the process starts, every
value is kept in that folder, one file per process, and a scrape of any worker reads them all:
counters and histograms add up across workers, and the gauges say how they combine (`livesum`:
the turns and streams of the live workers; `livemax`: the worst upkeep lag among them). The folder
must be emptied before the workers start (files of an earlier run would count again); `close` tells
the folder this process is gone, so its live gauges stop counting.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    generate_latest,
    multiprocess,
)

from application.ports.metrics import Metrics, MetricsPage

if TYPE_CHECKING:
    from application.ports.model_metrics import ModelOutcome, ModelPurpose
    from domain.conversations.messages import Usage

MULTIPROCESS_DIR = "PROMETHEUS_MULTIPROC_DIR"

# The `_created` series (when each series began) are one more series per series, in the text format
# a family of their own, that no dashboard reads; multiprocess mode never has them anyway.
disable_created_metrics()

TURN_SECONDS = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0, 600.0)
FIRST_TOKEN_SECONDS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0)
APPEND_SECONDS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0)
TURN = ("agent", "profile")
MODEL = ("purpose", "profile")


class PrometheusMetrics(Metrics, MetricsPage):
    def __init__(self) -> None:
        self._folder = os.environ.get(MULTIPROCESS_DIR) or None
        self._registry = registry = CollectorRegistry()
        self._turns = Counter("memagent_turns", "Turns that ended, by status.", [*TURN, "status"], registry=registry)
        self._turn_seconds = Histogram(
            "memagent_turn_duration_seconds", "Seconds from a turn's start to its end.", [*TURN, "status"],
            buckets=TURN_SECONDS, registry=registry,
        )
        self._first_token = Histogram(
            "memagent_time_to_first_token_seconds", "Seconds from a turn's start to its answer's first text.",
            TURN, buckets=FIRST_TOKEN_SECONDS, registry=registry,
        )
        self._model_calls = Counter(
            "memagent_model_calls", "Model calls that ended, by purpose and outcome.", [*MODEL, "outcome"],
            registry=registry,
        )
        self._tokens = Counter(
            "memagent_model_tokens", "Tokens of model calls, by direction (prompt, completion).",
            [*MODEL, "direction"], registry=registry,
        )
        self._cost = Counter("memagent_model_cost_usd", "USD model calls cost.", MODEL, registry=registry)
        self._tool_calls = Counter(
            "memagent_tool_calls", "Tool calls that ended, by tool and outcome.", ["tool", "outcome"],
            registry=registry,
        )
        self._active_turns = Gauge(
            "memagent_active_turns", "Turns running now.", TURN, multiprocess_mode="livesum", registry=registry
        )
        self._active_streams = Gauge(
            "memagent_active_streams", "Event streams (SSE) open now.", multiprocess_mode="livesum",
            registry=registry,
        )
        self._upkeep_lag = Gauge(
            "memagent_upkeep_lag_seconds", "Age of the oldest memory upkeep scheduled and not finished yet.",
            multiprocess_mode="livemax", registry=registry,
        )
        self._append_seconds = Histogram(
            "memagent_event_append_seconds", "Seconds one append of a turn's events to its log took.",
            buckets=APPEND_SECONDS, registry=registry,
        )
        self._store_errors = Counter(
            "memagent_store_errors", "Failures of a backing store, by store.", ["store"], registry=registry
        )
        self._limited = Counter(
            "memagent_rate_limited", "Requests refused by a limit, by limit and scope.", ["limit", "scope"],
            registry=registry,
        )
        # The share of a budget used, as the latest turn of the agent saw it (an account's budget too).
        self._budget_used = Gauge(
            "memagent_budget_used_ratio", "Share of a budget spent (1: spent), by scope and agent.", ["scope", "agent"],
            multiprocess_mode="mostrecent", registry=registry,
        )
        self._budget_alerts = Counter(
            "memagent_budget_alerts", "Turns that started with a budget nearly spent (warning) or were refused "
            "(exceeded).", ["scope", "agent", "level"], registry=registry,
        )

    def turn_started(self, agent: str, profile: str) -> None:
        self._active_turns.labels(agent, profile).inc()

    def turn_ended(self, agent: str, profile: str, status: str, seconds: float) -> None:
        self._active_turns.labels(agent, profile).dec()
        self._turns.labels(agent, profile, status).inc()
        self._turn_seconds.labels(agent, profile, status).observe(seconds)

    def first_token(self, agent: str, profile: str, seconds: float) -> None:
        self._first_token.labels(agent, profile).observe(seconds)

    def model_call(self, purpose: ModelPurpose, profile: str, outcome: ModelOutcome, usage: Usage | None) -> None:
        self._model_calls.labels(purpose.value, profile, outcome.value).inc()
        if usage is not None:
            self._tokens.labels(purpose.value, profile, "prompt").inc(usage.prompt_tokens)
            self._tokens.labels(purpose.value, profile, "completion").inc(usage.completion_tokens)
            self._cost.labels(purpose.value, profile).inc(usage.price)

    def tool_call(self, tool: str, outcome: str) -> None:
        self._tool_calls.labels(tool, outcome).inc()

    def event_appended(self, seconds: float) -> None:
        self._append_seconds.observe(seconds)

    def store_error(self, store: str) -> None:
        self._store_errors.labels(store).inc()

    def stream_opened(self) -> None:
        self._active_streams.inc()

    def stream_closed(self) -> None:
        self._active_streams.dec()

    def upkeep_lag(self, seconds: float) -> None:
        self._upkeep_lag.set(seconds)

    def request_limited(self, limit: str, scope: str = "") -> None:
        self._limited.labels(limit, scope).inc()

    def budget_used(self, scope: str, agent: str, ratio: float) -> None:
        self._budget_used.labels(scope, agent).set(ratio)

    def budget_alert(self, scope: str, agent: str, level: str) -> None:
        self._budget_alerts.labels(scope, agent, level).inc()

    def render(self) -> tuple[bytes, str]:
        if self._folder is None:
            return generate_latest(self._registry), CONTENT_TYPE_LATEST
        every_worker = CollectorRegistry()
        multiprocess.MultiProcessCollector(every_worker, path=self._folder)
        return generate_latest(every_worker), CONTENT_TYPE_LATEST

    def close(self) -> None:
        """This process is done: its live gauges leave the shared folder (multiprocess mode)."""
        if self._folder is not None:
            multiprocess.mark_process_dead(os.getpid(), self._folder)
