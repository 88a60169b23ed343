"""`memagent worker`: run the background jobs of finished turns (memory upkeep, titles, follow-up
questions) from the Redis queue, with MEMAGENT_JOBS__BACKEND=redis (docs/ARCHITECTURE.md §10).

Start as many as the load needs, on any machine that reaches the database and Redis; each takes
MEMAGENT_JOBS__CONCURRENCY jobs at once. SIGTERM lets the running jobs finish, then stops; a job
lost with a killed worker is run again by another once its timeout has passed. saq's line per job
follows MEMAGENT_SERVER__LOG_LEVEL, as uvicorn's per request do under `memagent serve`.
"""

from __future__ import annotations

import asyncio
import sys
from typing import TYPE_CHECKING

from application.errors import ApplicationError
from interfaces.lifecycle import start_backends, stop_backends
from interfaces.log_setup import configure_job_logging
from interfaces.wiring.build import build_container

if TYPE_CHECKING:
    import argparse

    from interfaces.settings.settings import Settings


def add_worker_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    commands.add_parser(
        "worker", help="run background jobs from Redis (MEMAGENT_JOBS__BACKEND=redis): upkeep, titles, follow-ups"
    )


def run_worker(settings: Settings) -> int:
    if settings.jobs.backend != "redis":
        print("memagent: worker: MEMAGENT_JOBS__BACKEND is inprocess, so the API process runs its jobs itself; "
              "set it to redis (in the API's environment too) to run them here", file=sys.stderr)
        return 1
    try:
        configure_job_logging(settings)
        asyncio.run(_work(settings))
    except ApplicationError as failure:
        print(f"memagent: worker: {failure.message}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        pass
    return 0


async def _work(settings: Settings) -> None:
    container = build_container(settings)
    try:
        await start_backends(container, settings)
        await container.job_worker().run()  # until SIGTERM or SIGINT
    finally:
        await stop_backends(container)
