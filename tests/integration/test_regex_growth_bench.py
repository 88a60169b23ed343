"""No ReDoS (issues 14 and 36): the growth benchmark finds no regex applied to user text or model
output (the offline memory models, the ReAct parser, the scripted model, the log redactor), and
no public function of theirs, that reads adversarial text, a user's or a model's, in more than
linear time; and it does find a quadratic pattern, among them the ReAct parser's old one on model
output. Run apart from the unit tests: it reads the CPU clock."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from tests.bench.regex_growth import adversarial, finds, growth, is_superlinear, model_output
from tests.service import ROOT

pytestmark = pytest.mark.integration


def test_no_pattern_or_public_function_grows_more_than_linearly_with_adversarial_text() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tests.bench.regex_growth"],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["texts"] >= 52  # 9 of them model output
    assert report["jobs"] >= 88
    assert report["superlinear"] == []


def test_the_benchmark_finds_a_quadratic_pattern() -> None:
    quadratic = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")  # tries each start of a long word for an "@"
    small_ms, whole_ms = growth(finds(quadratic), adversarial(512)["one long word"],
                                adversarial(8 * 1024)["one long word"])
    assert is_superlinear(small_ms, whole_ms), (small_ms, whole_ms)


def test_the_benchmark_finds_the_old_react_fence_pattern_quadratic_on_model_output() -> None:
    old = re.compile(r"```(?:json)?\s*+(\{.*?\})\s*+```", re.DOTALL)  # issue 36: 1 s of CPU at 32 KiB
    small_ms, whole_ms = growth(finds(old), model_output(1024)["model output: repeated fence openings"],
                                model_output(16 * 1024)["model output: repeated fence openings"])
    assert is_superlinear(small_ms, whole_ms), (small_ms, whole_ms)
