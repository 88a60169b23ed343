"""`memagent serve --workers N` runs several workers only on backends they all share."""

from __future__ import annotations

import pytest

from interfaces.cli.serve_workers import workers_refusal
from interfaces.settings.settings import Settings

SHARED = {
    "database": {"url": "postgresql+asyncpg://memagent@db:5432/memagent"},
    "events": {"backend": "redis"},
    "memory": {"backend": "redis"},
}


def settings(**groups: dict[str, str]) -> Settings:
    return Settings.model_validate(SHARED | groups)


@pytest.mark.parametrize("workers", [1, 2, 8])
def test_redis_events_and_memory_on_postgresql_take_any_number_of_workers(workers: int) -> None:
    assert workers_refusal(settings(), workers) is None


def test_one_worker_runs_on_the_embedded_default() -> None:
    assert workers_refusal(Settings.model_validate({}), 1) is None


def test_several_workers_on_the_embedded_default_are_refused_naming_every_setting() -> None:
    refusal = workers_refusal(Settings.model_validate({}), 2)

    assert refusal is not None
    assert refusal.startswith("--workers 2 needs backends every worker shares")
    for setting in ("MEMAGENT_EVENTS__BACKEND=redis", "MEMAGENT_MEMORY__BACKEND=redis", "MEMAGENT_DATABASE__URL"):
        assert setting in refusal
    assert "run one worker" in refusal.lower()


@pytest.mark.parametrize(
    ("groups", "named", "not_named"),
    [
        ({"events": {"backend": "inprocess"}}, "MEMAGENT_EVENTS__BACKEND", "MEMAGENT_MEMORY__BACKEND"),
        ({"memory": {"backend": "inprocess"}}, "MEMAGENT_MEMORY__BACKEND", "MEMAGENT_EVENTS__BACKEND"),
        ({"database": {"url": "sqlite:///./data/memagent.db"}}, "MEMAGENT_DATABASE__URL", "MEMAGENT_EVENTS__BACKEND"),
    ],
    ids=["in-process-events", "in-process-memory", "sqlite"],
)
def test_one_backend_of_a_single_process_is_enough_to_refuse_and_only_it_is_named(
    groups: dict[str, dict[str, str]], named: str, not_named: str
) -> None:
    refusal = workers_refusal(settings(**groups), 3)

    assert refusal is not None
    assert named in refusal
    assert not_named not in refusal


@pytest.mark.parametrize("workers", [0, -2])
def test_fewer_than_one_worker_is_refused(workers: int) -> None:
    assert workers_refusal(settings(), workers) == f"--workers must be 1 or more, not {workers}"
