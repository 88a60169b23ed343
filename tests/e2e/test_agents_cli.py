"""`memagent agents list | export | import`: agents kept in git and deployed from a pipeline, as an operator does."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.service import ROOT, service_env


def memagent(db_url: str, *args: str, env_extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = service_env({"MEMAGENT_DATABASE__URL": db_url} | (env_extra or {}))
    return subprocess.run(  # noqa: S603 - the project's own command line
        [sys.executable, "-m", "interfaces.cli.main", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False,
    )


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite+aiosqlite:///{tmp_path / 'memagent.db'}"


def test_an_agent_exported_to_a_file_is_imported_as_a_draft_then_published(db_url: str, tmp_path: Path) -> None:
    spec = {"id": "support", "name": "Support", "description": "Answers customers.",
            "config": {"preset_prompt": "You help customers of Acme.", "memory": {"dialog_round": 4}}}
    path = tmp_path / "support.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    imported = memagent(db_url, "agents", "import", str(path))
    assert imported.returncode == 0, imported.stderr
    assert imported.stdout.strip().split("\t") == ["support", "draft revision 1"]

    exported = memagent(db_url, "agents", "export", "support")
    assert exported.returncode == 0, exported.stderr
    round_trip = json.loads(exported.stdout)
    assert (round_trip["name"], round_trip["config"]["preset_prompt"]) == ("Support", "You help customers of Acme.")
    assert round_trip["config"]["memory"]["dialog_round"] == 4  # the whole config, defaults filled in

    round_trip["config"]["preset_prompt"] = "You help customers of Acme, briefly."
    path.write_text(json.dumps(round_trip), encoding="utf-8")
    published = memagent(db_url, "agents", "import", str(path), "--publish")
    assert published.returncode == 0, published.stderr
    assert "draft revision 2\tpublished version 1" in published.stdout

    listed = memagent(db_url, "agents", "list").stdout.splitlines()
    assert any(line.startswith("support\tSupport\tactive\tversion 1") for line in listed), listed


def test_an_unreadable_file_or_an_unknown_agent_is_one_line(db_url: str, tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    failed = memagent(db_url, "agents", "import", str(broken))
    assert failed.returncode == 1
    assert len(failed.stderr.strip().splitlines()) == 1
    missing = memagent(db_url, "agents", "export", "nobody")
    assert missing.returncode == 1
    assert "was not found" in missing.stderr


DEEP = "[" * 30_000 + "]" * 30_000  # past what Python's JSON parser can recurse into


def test_json_nested_too_deep_is_one_line_for_an_import_and_for_memagent_models(db_url: str, tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text('{"name": "x", "config": ' + DEEP + "}", encoding="utf-8")
    imported = memagent(db_url, "agents", "import", str(deep))
    assert imported.returncode == 1
    assert imported.stderr.strip() == f"memagent: agents import: {deep}: JSON nested too deep"

    started = memagent(db_url, "agents", "list", env_extra={"MEMAGENT_MODELS": DEEP})
    assert started.returncode == 1
    assert started.stderr.strip() == "memagent: cannot start: MEMAGENT_MODELS: JSON nested too deep"
