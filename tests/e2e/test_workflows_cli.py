"""`memagent workflows list | export | import`: workflows kept in git and deployed from a pipeline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.test_agents_cli import memagent
from tests.workflow_graphs import SIMPLE


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite+aiosqlite:///{tmp_path / 'memagent.db'}"


def test_a_workflow_exported_to_a_file_is_imported_as_a_draft_then_published(db_url: str, tmp_path: Path) -> None:
    spec = {"id": "greeter", "name": "greet_city", "description": "Greets a city.", "graph": SIMPLE}
    path = tmp_path / "greeter.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    imported = memagent(db_url, "workflows", "import", str(path))
    assert imported.returncode == 0, imported.stderr
    assert imported.stdout.strip().split("\t") == ["greeter", "draft revision 1"]

    exported = memagent(db_url, "workflows", "export", "greeter")
    assert exported.returncode == 0, exported.stderr
    round_trip = json.loads(exported.stdout)
    assert round_trip == spec

    round_trip["graph"]["nodes"][1]["template"] = "Bonjour {{ start.city }}"
    path.write_text(json.dumps(round_trip), encoding="utf-8")
    published = memagent(db_url, "workflows", "import", str(path), "--publish")
    assert published.returncode == 0, published.stderr
    assert "draft revision 2\tpublished version 1" in published.stdout

    listed = memagent(db_url, "workflows", "list").stdout.splitlines()
    assert listed == ["greeter\tgreet_city\tactive\tversion 1"]


def test_an_invalid_graph_an_unreadable_file_or_an_unknown_workflow_is_one_line(db_url: str, tmp_path: Path) -> None:
    invalid = tmp_path / "invalid.json"
    invalid.write_text(json.dumps({"name": "broken", "graph": {"nodes": [], "edges": []}}), encoding="utf-8")
    refused = memagent(db_url, "workflows", "import", str(invalid))
    assert refused.returncode == 1
    assert refused.stderr.strip() == ("memagent: workflows import: The workflow is not valid: nodes: no start node: "
                                      "a workflow has exactly one; nodes: no end node: its outputs are what the run "
                                      "gives.")
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    failed = memagent(db_url, "workflows", "import", str(broken))
    assert (failed.returncode, len(failed.stderr.strip().splitlines())) == (1, 1)
    missing = memagent(db_url, "workflows", "export", "nobody")
    assert missing.returncode == 1
    assert "was not found" in missing.stderr
