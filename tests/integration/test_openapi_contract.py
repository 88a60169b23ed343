"""The OpenAPI spec and the API agree: schemathesis fuzzes a real `memagent serve` from its own
/openapi.json with every check (`--checks all`: no 5xx, documented status codes, content types and
headers, response schemas, SSE events, schema-valid data accepted, invalid data refused, 405 with
`Allow`, keys enforced), on the embedded default here and on PostgreSQL + Redis with keys required in
test_openapi_contract_with_keys.py (a file each: on two pytest-xdist workers they run side by side).

Nothing of memagent's own API is excluded: the SSE answers are declared per event (`event`, `id`,
`data`), which schemathesis validates. /v1 is OpenAI's API, not memagent's: its routes are left out
of memagent's spec on purpose and proven with the `openai` SDK itself (tests/integration/test_openai_api*.py).
/mcp is a mounted app outside the spec (tests/integration/test_mcp_server.py).
The spec cannot say that a stats window's `to` comes after its `from` and spans at most 366 days
(two parameters at once): its descriptions say it in words, and OPERATION_RULES tells schemathesis
that a schema-valid window may still be 422 there (tests/integration/test_spec_mismatches.py proves
both sides of the days' format). With keys, the run also draws real ids (an agent with a published
version, its conversations, messages, tasks, a dataset and document, a key, an end user) besides
generated ones, so that schema-valid requests reach the resources they name.

Each run is bounded (MEMAGENT_TEST_SCHEMATHESIS_EXAMPLES examples per operation, 10 unless set:
the test command's share of two cores; set 100 for a deeper run; a request timeout) and ends by itself. One worker:
with two, hypothesis describes its filters with `ast.parse` from two threads at once, which on
CPython 3.11 now and then fails with "AST constructor recursion depth mismatch", a runtime error
of the tool, not of the API.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from tests.integration.streaming_helpers import serving
from tests.service import ROOT

pytestmark = pytest.mark.integration

EXAMPLES = os.environ.get("MEMAGENT_TEST_SCHEMATHESIS_EXAMPLES", "10")
RUN_LIMIT = 240 * max(1, int(EXAMPLES) // 10)  # seconds; 10 examples take about 20 s (a minute with keys)
POSITIVE_STATUSES = ["2xx", "3xx", "401", "403", "404", "409", "429", "5xx"]  # schemathesis's own
# Rules of the API that a schema cannot state, by operation (schemathesis's config, in TOML).
OPERATION_RULES = f"""
[[operations]]
include-path = "/api/agents/{{agent_id}}/stats"
include-method = "GET"
checks.positive_data_acceptance.expected-statuses = {json.dumps([*POSITIVE_STATUSES, "422"])}
""" + "".join(  # a workflow's graph: one start, no cycle, templates reading what ran before (docs/workflows.md)
    f"""
[[operations]]
include-path = "{path}"
include-method = "{method}"
checks.positive_data_acceptance.expected-statuses = {json.dumps([*POSITIVE_STATUSES, "422"])}
"""
    for method, path in (("POST", "/api/workflows"), ("PUT", "/api/workflows/{workflow_id}/draft"),
                         ("POST", "/api/workflows/{workflow_id}/publish"))
)
# Which parameters draw real ids, and from which set of them (`RealIds`' keys).
ID_PARAMETERS = {
    "path.agent_id": "agents", "body.agent_id": "agents", "path.conversation_id": "conversations",
    "body.conversation_id": "conversations", "path.message_id": "messages", "path.task_id": "tasks",
    "path.dataset_id": "datasets", "path.document_id": "documents", "path.key_id": "keys",
    "path.user": "users", "body.user": "users",
}
ID_ODDS = 0.5  # the other half generated: what the spec allows beyond the ids that exist
RealIds = Mapping[str, Sequence[str]]


def config_file(folder: Path, ids: RealIds | None = None) -> Path:
    """schemathesis's config: OPERATION_RULES, and with `ids` the parameters that draw them."""
    text = OPERATION_RULES
    for name, values in (ids or {}).items():
        text += f"\n[dictionaries.{name}]\nvalues = {json.dumps(list(values))}\n"
    if ids:
        text += "\n[parameters]\n" + "".join(
            f'"{where}" = {{ dictionary = "{name}", probability = {ID_ODDS} }}\n'
            for where, name in ID_PARAMETERS.items()
        )
    path = folder / "schemathesis.toml"
    path.write_text(text, encoding="utf-8")
    return path


def schemathesis(base_url: str, config: Path, *headers: str) -> subprocess.CompletedProcess[str]:
    st = shutil.which("st", path=str(Path(sys.executable).parent))
    assert st is not None, "schemathesis is in the dev extra: pip install -e '.[dev]'"
    args = [st, "--config-file", str(config), "run", f"{base_url}/openapi.json", "--checks", "all",
            "--max-examples", EXAMPLES, "--seed", "14", "--request-timeout", "20", "--generation-database", "none",
            "--no-color", "--workers", "1"]
    for header in headers:
        args += ["--header", header]
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=RUN_LIMIT, check=False)


def assert_no_failures(done: subprocess.CompletedProcess[str]) -> None:
    report = done.stdout[-6000:] + done.stderr[-2000:]
    assert done.returncode == 0, report
    summary = done.stdout.split("SUMMARY")[-1]
    assert "passed" in summary, report
    assert "failures" not in summary, report
    print(summary)  # the phases and how many cases ran: `pytest -rP` shows it


def test_the_embedded_default_answers_as_its_spec_says(tmp_path: Path) -> None:
    env = {"MEMAGENT_DATABASE__URL": f"sqlite+aiosqlite:///{tmp_path / 'memagent.db'}"}
    with serving(env, tmp_path) as service:
        assert_no_failures(schemathesis(service.base_url, config_file(tmp_path)))

