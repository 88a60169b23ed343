"""The server-peers benchmark (issue 39) runs in quick mode beside LangGraph Server and the bare relay
and prints its ratios as well-formed JSON. Timings are not asserted: they are the benchmark's to report
(docs/benchmarks.md), not a test's to judge. LangGraph Server runs from the venv the README's test
command makes (`.venv-langgraph`); without it this test fails rather than skipping the peer."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.service import ROOT, service_env

pytestmark = pytest.mark.integration

LANGGRAPH_VENV = ROOT / ".venv-langgraph"
SERVERS = ("memagent", "langgraph", "relay")
RATIO_FIGURES = ("wall_p50", "wall_late_p50", "cpu_per_turn_gross", "cpu_per_turn_net")
TARGETS = {
    "long": {"cpu_per_turn_at_most_0.25x_langgraph", "late_at_most_1.2x_early"},
    "fresh-same": {"cpu_per_turn_at_most_0.6x_langgraph", "wall_p50_at_most_1.5x_relay",
                   "cpu_per_turn_at_most_3x_relay", "late_at_most_1.2x_early"},
    "fresh-new": {"cpu_per_turn_at_most_0.6x_langgraph", "wall_p50_at_most_1.5x_relay",
                  "cpu_per_turn_at_most_3x_relay"},
}


def test_the_quick_server_peers_benchmark_prints_memagents_ratios_to_langgraph_server_and_the_relay() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tests.bench.server_peers", "--quick", "--fresh-user", "same,new",
         "--langgraph-venv", str(LANGGRAPH_VENV)],
        cwd=ROOT, env=service_env({}), capture_output=True, text=True, timeout=600, check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    report = json.loads(done.stdout)
    assert "error" not in report["langgraph"], report["langgraph"]
    for scenario, targets in TARGETS.items():
        measured = report[scenario]
        assert measured["turns"] == 10
        for server in SERVERS:
            assert measured[server]["cpu_ms_per_turn_gross"] > 0, (scenario, server)
        for peer in ("langgraph", "relay"):
            ratio = measured["ratios"][f"memagent_over_{peer}"]
            assert all(isinstance(ratio[f], float) and ratio[f] > 0 for f in RATIO_FIGURES), (scenario, ratio)
        assert set(measured["ratios"]["targets"]) == targets
        assert all(isinstance(met, bool) for met in measured["ratios"]["targets"].values())
