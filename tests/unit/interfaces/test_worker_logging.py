"""`memagent worker` and `memagent serve` give saq's logger MEMAGENT_SERVER__LOG_LEVEL, as `memagent
serve` gives it to uvicorn's (interfaces/log_setup.py): at warning or above, saq's line per job is
left out; an unknown level is refused in one line before either starts."""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING

import pytest
from saq.worker import logger as saq_logger  # the one logger saq's worker and queues log each job through

from interfaces.cli.main import main
from interfaces.log_setup import configure_job_logging
from interfaces.settings.settings import Settings

if TYPE_CHECKING:
    from collections.abc import Iterator

FINISHED = "Finished Job<function=run_job, key=title:m1>"  # as saq logs a job's end


@pytest.fixture(autouse=True)
def saq_level() -> Iterator[None]:
    """The logger is the process's: each test leaves it at the level it found."""
    level = saq_logger.level
    yield
    saq_logger.setLevel(level)


def saq_lines_at(level: str, caplog: pytest.LogCaptureFixture) -> list[str]:
    """What reaches the process's handlers of a job's INFO line and a WARNING, with the worker's logging
    set up from MEMAGENT_SERVER__LOG_LEVEL=`level` and the process itself at INFO."""
    configure_job_logging(Settings.model_validate({"server": {"log_level": level}}))
    with caplog.at_level(logging.INFO):
        saq_logger.info(FINISHED)
        saq_logger.warning("No active workers found for queue jobs")
    return [record.getMessage() for record in caplog.records if record.name == saq_logger.name]


def test_at_warning_saq_leaves_out_its_line_per_job_but_not_its_warnings(caplog: pytest.LogCaptureFixture) -> None:
    assert saq_lines_at("WARNING", caplog) == ["No active workers found for queue jobs"]


def test_at_info_saq_logs_each_job(caplog: pytest.LogCaptureFixture) -> None:
    assert saq_lines_at("info", caplog) == [FINISHED, "No active workers found for queue jobs"]


def loud_settings(monkeypatch: pytest.MonkeyPatch, **more: str) -> None:
    """The environment of a deployment on PostgreSQL (which no command reaches here) with an unknown
    log level, and `more` settings (MEMAGENT_<NAME>)."""
    for name in [n for n in os.environ if n.startswith("MEMAGENT_")]:
        monkeypatch.delenv(name)
    settings = {"DATABASE__URL": "postgresql+asyncpg://memagent@db:5432/memagent", "SERVER__LOG_LEVEL": "loud"}
    for name, value in (settings | more).items():
        monkeypatch.setenv(f"MEMAGENT_{name}", value)


def test_the_worker_command_refuses_a_level_the_server_would_not_know(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    loud_settings(monkeypatch, MEMORY__BACKEND="redis", JOBS__BACKEND="redis")
    assert main(["worker"]) == 1  # before it reaches the database or Redis
    assert "MEMAGENT_SERVER__LOG_LEVEL is one of critical, error, warning, info, debug, trace, not 'loud'" in (
        capsys.readouterr().err
    )


def test_the_serve_command_refuses_an_unknown_level_with_one_line_before_it_starts(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    loud_settings(monkeypatch)
    assert main(["serve"]) == 1  # before it reaches the database or binds a port
    err = capsys.readouterr().err
    assert "memagent: cannot start: MEMAGENT_SERVER__LOG_LEVEL is one of critical, error, warning, info" in err
    assert "Traceback" not in err
