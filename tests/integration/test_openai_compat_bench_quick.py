"""The OpenAI-compatibility benchmark runs in quick mode and prints well-formed JSON (timings and CPU
figures are not asserted: they are the benchmark's to report, not a test's to judge)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.service import ROOT, service_env

pytestmark = pytest.mark.integration

ROUTES = ("api_chat", "v1_chat_completions")
FIGURES = ("cpu_ms_per_turn", "cpu_ms_per_turn_ticks", "wall_p50_ms")


def test_the_quick_openai_compat_benchmark_runs_both_routes_and_prints_well_formed_json() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tests.bench.openai_compat", "--quick"],
        cwd=ROOT, env=service_env({}), capture_output=True, text=True, timeout=300, check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["mode"], report["chunks_per_turn"]) == ("quick", 50)
    for scenario in ("fresh", "continued"):
        measured = report[scenario]
        assert set(measured) == {*ROUTES, "added_cpu_ratio", "target_added", "within_target"}
        for route in ROUTES:
            assert measured[route]["turns"] == 20
            assert all(isinstance(measured[route][f], float) for f in FIGURES), measured[route]
        assert isinstance(measured["added_cpu_ratio"], float)
        assert measured["target_added"] == 0.1
        assert isinstance(measured["within_target"], bool)
