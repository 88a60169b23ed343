"""MEMAGENT_JOBS__BACKEND=redis is refused at start-up where job workers could not share the work,
and `memagent worker` is refused where the API runs its jobs itself."""

from __future__ import annotations

import os
from typing import Any

import pytest

from interfaces.cli.main import main
from interfaces.settings.checks import settings_problem
from interfaces.settings.settings import Settings

SHARED: dict[str, Any] = {
    "database": {"url": "postgresql+asyncpg://memagent@db:5432/memagent"},
    "memory": {"backend": "redis"},
    "jobs": {"backend": "redis"},
}


def test_redis_jobs_with_redis_memory_on_a_shared_database_start() -> None:
    assert settings_problem(Settings.model_validate(SHARED)) is None


def test_redis_jobs_beside_an_in_process_memory_cache_are_refused() -> None:
    problem = settings_problem(Settings.model_validate(SHARED | {"memory": {"backend": "inprocess"}}))
    assert problem is not None
    assert problem.startswith("MEMAGENT_JOBS__BACKEND: ")
    assert "MEMAGENT_MEMORY__BACKEND=redis" in problem


def test_redis_jobs_on_an_in_memory_sqlite_are_refused() -> None:
    problem = settings_problem(Settings.model_validate(SHARED | {"database": {"url": "sqlite+aiosqlite:///:memory:"}}))
    assert problem is not None
    assert "shar" in problem


def test_a_job_timeout_shorter_than_the_upkeep_lease_is_refused() -> None:
    groups = SHARED | {"jobs": {"backend": "redis", "timeout": 10}, "memory": {"backend": "redis", "upkeep_lease": 60}}
    problem = settings_problem(Settings.model_validate(groups))
    assert problem is not None
    assert "MEMAGENT_MEMORY__UPKEEP_LEASE" in problem


def test_the_worker_command_on_in_process_jobs_says_what_to_set(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in [n for n in os.environ if n.startswith("MEMAGENT_")]:
        monkeypatch.delenv(name)
    assert main(["worker"]) == 1
    assert "MEMAGENT_JOBS__BACKEND" in capsys.readouterr().err
