"""The server-peers benchmark (issue 39) runs in quick mode beside LangGraph Server and the bare relay
and prints its ratios as well-formed JSON. Timings are not asserted: they are the benchmark's to report
(docs/benchmarks.md), not a test's to judge. LangGraph Server runs from its venv of its own
(`.venv-langgraph`, tests/bench/server_peers_langgraph.py), which the README's test command makes beside
memagent's; the same-user scenario is left to runs by hand, for the test command's time."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.service import ROOT, service_env

pytestmark = pytest.mark.integration

SERVERS = ("memagent", "langgraph", "relay")
RATIO_FIGURES = ("wall_p50", "wall_late_p50", "cpu_per_turn_gross", "cpu_per_turn_net")
TARGETS = {
    "long": {"late_at_most_1.2x_early", "cpu_late_at_most_1.2x_early", "cpu_per_turn_at_most_0.25x_langgraph"},
    "fresh-new": {"wall_p50_at_most_1.5x_relay", "cpu_per_turn_at_most_3x_relay",
                  "cpu_per_turn_at_most_0.6x_langgraph"},
}


def test_the_quick_server_peers_benchmark_prints_memagents_ratios_to_langgraph_server_and_the_relay() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tests.bench.server_peers", "--quick", "--fresh-user", "new",
         "--servers", ",".join(SERVERS)],
        cwd=ROOT, env=service_env({}), capture_output=True, text=True, timeout=600, check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    report = json.loads(done.stdout)
    assert "error" not in report["langgraph"], report["langgraph"]  # its venv is there (the README's command)
    assert report["langgraph"]["versions"]["langgraph-api"]
    for scenario, targets in TARGETS.items():
        measured = report[scenario]
        assert measured["turns"] == 10
        for server in SERVERS:
            assert measured[server]["cpu_ms_per_turn_gross"] > 0, (scenario, server)
        for peer in SERVERS[1:]:
            ratio = measured["ratios"][f"memagent_over_{peer}"]
            assert all(isinstance(ratio[f], float) and ratio[f] > 0 for f in RATIO_FIGURES), (scenario, ratio)
        assert set(measured["ratios"]["targets"]) == targets
        assert all(isinstance(met, bool) for met in measured["ratios"]["targets"].values())
