"""MEMAGENT_JOBS__*: where a finished turn's background jobs run (docs/ARCHITECTURE.md §10)."""

from typing import Literal

from pydantic import BaseModel, Field


class JobsSettings(BaseModel):
    """`inprocess`: memory upkeep, titles and follow-up questions run in the API process. `redis`: they
    are jobs on Redis (saq), run by `memagent worker` processes; the API process queues them and
    spends its CPU on turns and streams. `redis` needs MEMAGENT_MEMORY__BACKEND=redis and a database
    every process shares, so a worker sees what the API wrote."""

    backend: Literal["inprocess", "redis"] = "inprocess"
    queue: str = Field("memagent-jobs", min_length=1, max_length=100, pattern=r"^[A-Za-z0-9_.:-]+$",
                       description="the saq queue's name on Redis")
    timeout: float = Field(
        300.0, gt=0, le=86_400,
        description="seconds a job may run; a job of a worker that died is retried once this has passed",
    )
    retries: int = Field(3, ge=1, le=20, description="attempts of a job that fails, the first included")
    retry_delay: float = Field(1.0, ge=0, le=3600, description="seconds before the first retry, doubling after")
    sweep_interval: int = Field(10, ge=1, le=3600, description="seconds between a worker's looks for lost jobs")
    concurrency: int = Field(10, ge=1, le=1000, description="jobs one worker runs at once")
