"""The OpenAPI spec and the API agree: schemathesis fuzzes a real `memagent serve` from its own
/openapi.json with every check (`--checks all`: no 5xx, documented status codes, content types and
headers, response schemas, SSE events, schema-valid data accepted, invalid data refused, 405 with
`Allow`, keys enforced), on the embedded default here and on PostgreSQL + Redis with keys required in
test_openapi_contract_with_keys.py (a file each: on two pytest-xdist workers they run side by side).

Nothing of memagent's own API is excluded: the SSE answers are declared per event (`event`, `id`,
`data`), which schemathesis validates. /v1 is OpenAI's API, not memagent's: its routes are left out
of memagent's spec on purpose and proven with the `openai` SDK itself (tests/integration/test_openai_api*.py).
/mcp is a mounted app outside the spec (tests/integration/test_mcp_server.py).
Each run is bounded (few examples per operation, a request timeout) and ends by itself. One worker:
with two, hypothesis describes its filters with `ast.parse` from two threads at once, which on
CPython 3.11 now and then fails with "AST constructor recursion depth mismatch", a runtime error
of the tool, not of the API.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.streaming_helpers import serving
from tests.service import ROOT

pytestmark = pytest.mark.integration

RUN_LIMIT = 240  # seconds; a run takes about 20 s


def schemathesis(base_url: str, *headers: str) -> subprocess.CompletedProcess[str]:
    st = shutil.which("st", path=str(Path(sys.executable).parent))
    assert st is not None, "schemathesis is in the dev extra: pip install -e '.[dev]'"
    args = [st, "run", f"{base_url}/openapi.json", "--checks", "all", "--max-examples", "25", "--seed", "14",
            "--request-timeout", "20", "--generation-database", "none", "--no-color", "--workers", "1"]
    for header in headers:
        args += ["--header", header]
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=RUN_LIMIT, check=False)


def assert_no_failures(done: subprocess.CompletedProcess[str]) -> None:
    report = done.stdout[-6000:] + done.stderr[-2000:]
    assert done.returncode == 0, report
    summary = done.stdout.split("SUMMARY")[-1]
    assert "passed" in summary, report
    assert "failures" not in summary, report


def test_the_embedded_default_answers_as_its_spec_says(tmp_path: Path) -> None:
    env = {"MEMAGENT_DATABASE__URL": f"sqlite+aiosqlite:///{tmp_path / 'memagent.db'}"}
    with serving(env, tmp_path) as service:
        assert_no_failures(schemathesis(service.base_url))

