"""`memagent serve --workers 2` comes up on a host where a worker takes longer than uvicorn's 5 s
default health check to start (a worker re-imports the app first: 6-7 s of CPU on a small, busy
host). A `sitecustomize` that sleeps 7 s at every interpreter start stands in for the slow host."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.streaming_helpers import shared_backends
from tests.integration.worker_processes import serving_workers

pytestmark = pytest.mark.integration

SLOW_START = "import time\ntime.sleep(7)  # a worker process on a slow host, before it can answer a health check\n"


def test_workers_slower_to_start_than_uvicorns_health_check_are_not_killed(tmp_path: Path) -> None:
    slow = tmp_path / "slow"
    slow.mkdir()
    (slow / "sitecustomize.py").write_text(SLOW_START)
    settings = {"PYTHONPATH": str(slow), "MEMAGENT_LLM__PROVIDER": "scripted"}
    with shared_backends(settings) as env, serving_workers(env, tmp_path, 2) as workers:
        assert workers.client().get("/healthz").status_code == 200
        assert "died" not in workers.log()
