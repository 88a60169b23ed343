"""The memory benchmark runs in quick mode and prints well-formed JSON (timings are not asserted)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.service import ROOT, service_env

pytestmark = pytest.mark.integration


def test_the_quick_memory_benchmark_completes_with_well_formed_json() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tests.bench.memory_recall", "--quick"],
        cwd=ROOT, env=service_env({}), capture_output=True, text=True, timeout=300, check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["mode"], report["turns"]) == ("quick", 90)
    assert set(report["prompt_tokens"]) == {"turn_15", "turn_45", "turn_90"}
    for point in report["prompt_tokens"].values():
        assert point["memagent"] > 0
        assert point["full_history"] > 0
        assert point["saving"] == round(1 - point["memagent"] / point["full_history"], 4)
    recall = report["recall"]
    assert recall["facts"] == 10
    assert recall["recalled"] == recall["facts"] - len(recall["missed"])
    assert sum(recall["found_in"].values()) == recall["recalled"]
    # The script, the offline memory and the lexical embedder are deterministic: so is the recall.
    assert recall["share"] >= 0.9, recall
    assert report["memory"]["archive_entries"] > 0
    assert report["memory"]["entities"] > 0
    assert isinstance(report["seconds"], float)
