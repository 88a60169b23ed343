"""The usage-stats benchmark runs in quick mode and prints well-formed JSON (timings are not asserted)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.service import ROOT, service_env

pytestmark = pytest.mark.integration

TIMINGS = ("stats_p50_ms", "stats_p95_ms", "floor_count_p50_ms", "floor_count_p95_ms", "no_index_p50_ms",
           "no_index_p95_ms")


def test_the_quick_stats_benchmark_counts_the_same_turns_on_both_backends_with_well_formed_json() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tests.bench.agent_stats", "--quick"],
        cwd=ROOT, env=service_env({}), capture_output=True, text=True, timeout=300, check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["mode"], report["window"]) == ("quick", ["2026-03-02", "2026-03-31"])
    postgres, sqlite = report["postgres"], report["sqlite"]
    for backend in (postgres, sqlite):
        assert (backend["messages"], backend["runs"]) == (2000, 20)
        assert all(isinstance(backend[t], float) and backend[t] > 0 for t in TIMINGS), backend
        assert backend["stats_vs_floor_p50"] == round(backend["stats_p50_ms"] / backend["floor_count_p50_ms"], 2)
    # The seed is fixed: both databases hold the same turns and count them alike.
    shape = ("window_turns", "days", "versions")
    assert [postgres[k] for k in shape] == [sqlite[k] for k in shape]
    assert 0 < postgres["window_turns"] < 2000
    assert postgres["versions"] == 3
    assert postgres["target_ms"] == 100.0
