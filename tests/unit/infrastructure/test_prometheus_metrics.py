"""PrometheusMetrics as a scrape reads it: each family with its labels and exact values, in one
process and across processes sharing PROMETHEUS_MULTIPROC_DIR (which the library reads when it is
imported, so the workers here are processes of their own)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from application.ports.model_metrics import ModelOutcome, ModelPurpose
from domain.conversations.messages import Usage
from infrastructure.metrics.prometheus_metrics import MULTIPROCESS_DIR, PrometheusMetrics
from tests.service import ROOT

FAMILIES = {
    "memagent_turns", "memagent_turn_duration_seconds", "memagent_time_to_first_token_seconds",
    "memagent_model_calls", "memagent_model_tokens", "memagent_model_cost_usd", "memagent_tool_calls",
    "memagent_active_turns", "memagent_active_streams", "memagent_upkeep_lag_seconds",
    "memagent_event_append_seconds", "memagent_store_errors", "memagent_rate_limited",
    "memagent_budget_used_ratio", "memagent_budget_alerts",
}


def samples(body: bytes) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """Every sample of a scrape, keyed by its name and labels."""
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(body.decode())
        for s in family.samples
    }


def value(body: bytes, name: str, **labels: str) -> float:
    return samples(body)[(name, frozenset(labels.items()))]


@pytest.fixture
def metrics(monkeypatch: pytest.MonkeyPatch) -> PrometheusMetrics:
    monkeypatch.delenv(MULTIPROCESS_DIR, raising=False)
    return PrometheusMetrics()


def test_every_family_is_exposed_even_before_anything_happened(metrics: PrometheusMetrics) -> None:
    body, content_type = metrics.render()
    assert content_type.startswith("text/plain")
    assert {family.name for family in text_string_to_metric_families(body.decode())} == FAMILIES


def test_turns_count_by_agent_profile_and_status_and_active_turns_go_back_down(metrics: PrometheusMetrics) -> None:
    metrics.turn_started("helper", "fast")
    metrics.turn_started("helper", "fast")
    metrics.turn_ended("helper", "fast", "normal", 1.5)
    body, _ = metrics.render()
    assert value(body, "memagent_active_turns", agent="helper", profile="fast") == 1
    metrics.turn_ended("helper", "fast", "stop", 0.5)
    metrics.first_token("helper", "fast", 0.2)
    body, _ = metrics.render()
    labels = {"agent": "helper", "profile": "fast"}
    assert value(body, "memagent_turns_total", **labels, status="normal") == 1
    assert value(body, "memagent_turns_total", **labels, status="stop") == 1
    assert value(body, "memagent_turn_duration_seconds_sum", **labels, status="normal") == 1.5
    assert value(body, "memagent_turn_duration_seconds_bucket", **labels, status="stop", le="0.5") == 1
    assert value(body, "memagent_time_to_first_token_seconds_count", **labels) == 1
    assert value(body, "memagent_active_turns", **labels) == 0


def test_model_calls_count_their_tokens_by_direction_and_their_cost(metrics: PrometheusMetrics) -> None:
    metrics.model_call(ModelPurpose.CHAT, "default", ModelOutcome.OK, Usage(100, 20, 0.0015))
    metrics.model_call(ModelPurpose.CHAT, "default", ModelOutcome.CANCELLED, Usage(50, 5, 0.0005, estimated=True))
    metrics.model_call(ModelPurpose.EMBEDDINGS, "openai", ModelOutcome.ERROR, None)
    body, _ = metrics.render()
    chat = {"purpose": "chat", "profile": "default"}
    assert value(body, "memagent_model_calls_total", **chat, outcome="ok") == 1
    assert value(body, "memagent_model_calls_total", **chat, outcome="cancelled") == 1
    assert value(body, "memagent_model_tokens_total", **chat, direction="prompt") == 150
    assert value(body, "memagent_model_tokens_total", **chat, direction="completion") == 25
    assert value(body, "memagent_model_cost_usd_total", **chat) == pytest.approx(0.002)
    assert value(body, "memagent_model_calls_total", purpose="embeddings", profile="openai", outcome="error") == 1
    assert ("memagent_model_tokens_total", frozenset({("purpose", "embeddings"), ("profile", "openai"),
                                                      ("direction", "prompt")})) not in samples(body)


def test_tools_streams_appends_store_errors_lag_and_limits(metrics: PrometheusMetrics) -> None:
    metrics.tool_call("calculator", "ok")
    metrics.tool_call("calculator", "timeout")
    metrics.stream_opened()
    metrics.stream_opened()
    metrics.stream_closed()
    metrics.event_appended(0.004)
    metrics.store_error("database")
    metrics.upkeep_lag(7.0)
    metrics.request_limited("rpm", "key")
    body, _ = metrics.render()
    assert value(body, "memagent_tool_calls_total", tool="calculator", outcome="ok") == 1
    assert value(body, "memagent_tool_calls_total", tool="calculator", outcome="timeout") == 1
    assert value(body, "memagent_active_streams") == 1
    assert value(body, "memagent_event_append_seconds_bucket", le="0.005") == 1
    assert value(body, "memagent_event_append_seconds_bucket", le="0.0025") == 0
    assert value(body, "memagent_store_errors_total", store="database") == 1
    assert value(body, "memagent_upkeep_lag_seconds") == 7
    assert value(body, "memagent_rate_limited_total", limit="rpm", scope="key") == 1


def test_two_instances_in_one_process_keep_their_own_counts(metrics: PrometheusMetrics) -> None:
    other = PrometheusMetrics()
    other.tool_call("calculator", "ok")
    body, _ = metrics.render()
    assert ("memagent_tool_calls_total", frozenset({("tool", "calculator"), ("outcome", "ok")})) not in samples(body)


WORKER = textwrap.dedent("""
    import sys
    from infrastructure.metrics.prometheus_metrics import PrometheusMetrics
    metrics = PrometheusMetrics()
    for _ in range(int(sys.argv[1])):
        metrics.turn_started("default", "default")
        metrics.turn_ended("default", "default", "normal", 1.0)
        metrics.tool_call("calculator", "ok")
    metrics.turn_started("default", "default")  # still running when the worker stops
    metrics.upkeep_lag(float(sys.argv[1]))
    if sys.argv[2] == "close":
        metrics.close()
""")


def worker(folder: Path, turns: int, ending: str) -> None:
    env = {MULTIPROCESS_DIR: str(folder), "PATH": "/usr/bin:/bin"}
    subprocess.run([sys.executable, "-c", WORKER, str(turns), ending], cwd=ROOT, env=env, check=True, timeout=60)


def test_workers_sharing_the_multiprocess_folder_add_up_and_a_closed_one_leaves_the_live_gauges(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    worker(tmp_path, 2, "keep")  # a worker still serving (its live files stay)
    worker(tmp_path, 3, "close")  # a worker that stopped
    monkeypatch.setenv(MULTIPROCESS_DIR, str(tmp_path))
    body, _ = PrometheusMetrics().render()
    turns = {"agent": "default", "profile": "default"}
    assert value(body, "memagent_turns_total", **turns, status="normal") == 5
    assert value(body, "memagent_turn_duration_seconds_count", **turns, status="normal") == 5
    assert value(body, "memagent_tool_calls_total", tool="calculator", outcome="ok") == 5
    assert value(body, "memagent_active_turns", **turns) == 1  # the closed worker's turn no longer counts
    assert value(body, "memagent_upkeep_lag_seconds") == 2  # the live worker's: the closed one's is gone
