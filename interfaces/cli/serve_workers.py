"""`memagent serve --workers N`: N uvicorn worker processes answering on one socket.

uvicorn's multiprocess mode spawns every worker afresh (nothing of this process's memory goes
with it), so the app is named by import string and built in the worker, by `worker_app`, from
the environment it inherits: the same settings, and one metrics folder for all of them.

Several workers share turns only through shared backends: each worker's in-process event log,
task control and memory cache are its own, so a turn could not be followed, resumed or stopped
through another worker, and its memory would be stale there. A SQLite file takes one writer at
a time across processes. `workers_refusal` says so before anything starts. What every worker does
at start-up is safe side by side (interfaces/lifecycle.py says how).
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import tempfile
from typing import TYPE_CHECKING

from prometheus_client import multiprocess

from infrastructure.metrics.prometheus_metrics import MULTIPROCESS_DIR
from infrastructure.persistence.urls import is_sqlite, normalise_url
from interfaces.log_setup import configure_job_logging, configure_logging
from interfaces.settings.settings import Settings

if TYPE_CHECKING:
    from collections.abc import Iterator

    from fastapi import FastAPI

WORKER_APP = "interfaces.cli.serve_workers:worker_app"
SHARED_BACKENDS = ("MEMAGENT_EVENTS__BACKEND=redis", "MEMAGENT_MEMORY__BACKEND=redis")


def workers_refusal(settings: Settings, workers: int) -> str | None:
    """Why `serve` must not run `workers` workers with these settings, or None."""
    if workers < 1:
        return f"--workers must be 1 or more, not {workers}"
    if workers == 1:
        return None
    missing = [
        wanted for wanted, backend in zip(SHARED_BACKENDS, (settings.events.backend, settings.memory.backend),
                                          strict=True)
        if backend != "redis"
    ]
    if is_sqlite(normalise_url(settings.database.url)):
        missing.append("MEMAGENT_DATABASE__URL=postgresql://…")
    if not missing:
        return None
    return (
        f"--workers {workers} needs backends every worker shares; set {', '.join(missing)}"
        " (with in-process events and memory each worker keeps its own turns: a turn could not be"
        " followed, resumed or stopped through another worker; a SQLite file takes one writer at a time)."
        " Or run one worker"
    )


@contextlib.contextmanager
def shared_metrics_folder() -> Iterator[str]:
    """The folder where every worker keeps its metrics, so that a scrape of any answers the sums of
    all: the operator's PROMETHEUS_MULTIPROC_DIR as it is, or else a fresh one made here for these
    workers and removed once they are gone (an earlier run's files would count again)."""
    given = os.environ.get(MULTIPROCESS_DIR)
    if given:
        try:
            yield given
        finally:  # uvicorn's parent checked the backends before it spawned: its gauges leave too
            multiprocess.mark_process_dead(os.getpid(), given)
        return
    folder = tempfile.mkdtemp(prefix="memagent-metrics-")
    os.environ[MULTIPROCESS_DIR] = folder  # inherited by the workers uvicorn spawns
    try:
        yield folder
    finally:
        del os.environ[MULTIPROCESS_DIR]
        shutil.rmtree(folder, ignore_errors=True)


def worker_app() -> FastAPI:
    """One worker's app (uvicorn calls it in the worker): settings and logging from the environment,
    which `memagent serve` has already checked."""
    settings = Settings()
    configure_logging(settings, logging.INFO)
    configure_job_logging(settings)
    from interfaces.app import create_app  # the web app's routes and protocols: only where it serves

    return create_app(settings)
