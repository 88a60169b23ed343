"""The recall-growth benchmark (issue 39, item 2) runs in quick mode and prints, for each size of a
user's memory, a new conversation's recall with the kept matrix beside the whole read it is measured
against. Timings are not asserted: they are the benchmark's to report (docs/benchmarks.md)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.service import ROOT, service_env

pytestmark = pytest.mark.integration

WAYS = ("kept", "whole", "unchanged")


def test_the_quick_recall_growth_benchmark_prints_the_kept_matrix_beside_a_whole_read() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tests.bench.recall_growth", "--quick"],
        cwd=ROOT, env=service_env({}), capture_output=True, text=True, timeout=300, check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    report = json.loads(done.stdout)
    sizes = report["sizes"]
    assert [size["conversations"] > 0 for size in sizes] == [True, True]
    assert sizes[0]["conversations"] < sizes[1]["conversations"]
    for size in sizes:
        assert all(size[f"{way}_p50_ms"] > 0 for way in WAYS), size
        assert size["kept_over_whole_p50"] > 0
    assert set(report["from_smallest_to_largest"]) == set(WAYS)
