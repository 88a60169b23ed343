"""MEMAGENT_TURN__* and MEMAGENT_TITLES__*: how long a turn and its parts may take."""

from __future__ import annotations

from pydantic import BaseModel, Field


class TurnSettings(BaseModel):
    timeout: float = Field(600.0, gt=0)
    # seconds between checks for a stop request or a client gone
    stop_check_interval: float = Field(0.2, gt=0)
    # seconds a turn runs on with no client following it, then it stops as if asked
    client_grace: float = Field(30.0, gt=0)
    # the worker running a turn renews its lease within this; a lapsed lease means the worker is gone
    worker_lease: float = Field(15.0, gt=0)
    # seconds between sweeps that end turns whose worker is gone
    sweep_interval: float = Field(30.0, gt=0)
    tool_timeout: float = Field(30.0, gt=0)
    client_tool_timeout: float = Field(
        300.0, gt=0, description="seconds a turn paused for its client's own tools waits for their results, then "
        "it ends as stopped; the pause counts against `timeout`",
    )
    tool_retries: int = Field(2, ge=0)
    tool_retry_delay: float = Field(1.0, ge=0)
    max_query_bytes: int = Field(32 * 1024, gt=0)
    task_ttl: float = Field(1800.0, gt=0)
    preparing_at_once: int = Field(
        8, ge=0, description="turns of one process that read their memory and assemble their prompt at once "
        "(the rest wait, having sent nothing, so the streams already running keep their pace); 0: no bound",
    )
    save_retry: float = Field(
        10.0, ge=0, description="seconds a turn's save is retried, with backoff, while the database is unavailable"
    )


class TitlesSettings(BaseModel):
    wait: float = Field(
        0.5, ge=0, le=10,
        description="seconds a turn's terminal event waits, at most, for its conversation's new title (first turn)",
    )
