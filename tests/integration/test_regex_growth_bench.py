"""No ReDoS (issue 14): the growth benchmark finds no regex of the offline memory models, and no
public function of theirs, that reads adversarial text in more than linear time; and it does find
a quadratic pattern. Run apart from the unit tests: it reads the CPU clock."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from tests.bench.regex_growth import adversarial, finds, growth, is_superlinear
from tests.service import ROOT

pytestmark = pytest.mark.integration


def test_no_pattern_or_public_function_grows_more_than_linearly_with_adversarial_text() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tests.bench.regex_growth"],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["texts"] >= 40
    assert report["jobs"] >= 36
    assert report["superlinear"] == []


def test_the_benchmark_finds_a_quadratic_pattern() -> None:
    quadratic = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")  # tries each start of a long word for an "@"
    small_ms, whole_ms = growth(finds(quadratic), adversarial(512)["one long word"],
                                adversarial(8 * 1024)["one long word"])
    assert is_superlinear(small_ms, whole_ms), (small_ms, whole_ms)
