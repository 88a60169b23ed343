"""Lost jobs come back together (issue 36): jobs lost with a SIGKILLed `memagent worker` are all
re-queued once their timeout has passed, not one every few seconds. saq's own sweep waited up to 5 s
per lost job, one after another, for a dead worker to report an abort it would never report; here six
upkeeps lost at once must all be finished by another worker within the timeout, the sweep's period,
one abort wait and a margin for their own run time, where saq's one-by-one sweep takes 30 s more."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from infrastructure.jobs.saq_sweep import ABORT_WAIT
from tests.integration.job_worker_processes import FirstDigestsStall, job_settings, job_worker
from tests.integration.streaming_helpers import READY_WITHIN, open_chat, serving, wait_until
from tests.llm_server import ScriptedLLMServer

pytestmark = pytest.mark.integration

NAMES = ("Ada Lovelace", "Grace Hopper", "Alan Turing", "Barbara Liskov", "Donald Knuth", "Edsger Dijkstra")
LOST = len(NAMES)  # upkeeps running on the worker when it is killed, one per conversation
TIMEOUT = 4.0  # MEMAGENT_JOBS__TIMEOUT: the lease a lost job waits out
SWEEP = 1.0  # MEMAGENT_JOBS__SWEEP_INTERVAL
MARGIN = 6.0  # the jobs' own run time (offline model calls, database writes) on a busy 2-core machine


@pytest.fixture
def settings(server: ScriptedLLMServer) -> Iterator[dict[str, str]]:
    # Every upkeep and title at once, so that all upkeeps are lost with the worker.
    with job_settings(server, MEMAGENT_JOBS__TIMEOUT=str(TIMEOUT), MEMAGENT_JOBS__SWEEP_INTERVAL=str(int(SWEEP)),
                      MEMAGENT_JOBS__CONCURRENCY="50") as env:
        yield env


def entities_of(client: httpx.Client, conversation_id: str) -> list[object]:
    response = client.get(f"/api/conversations/{conversation_id}/memory")
    assert response.status_code == 200, response.text
    return list(response.json()["entities"])


def test_jobs_lost_with_a_killed_worker_are_all_finished_within_their_timeout_not_one_by_one(
    server: ScriptedLLMServer, settings: dict[str, str], tmp_path: Path
) -> None:
    script = FirstDigestsStall(LOST)
    server.answer_by(lambda body: script)  # every call, however many retries the load makes
    with serving(settings, tmp_path) as api, httpx.Client(base_url=api.base_url, timeout=30) as client:
        conversations = []
        with job_worker(settings, tmp_path, "a") as first:
            for name in NAMES:
                with open_chat(client, f"My name is {name} and my favourite colour is teal.") as turn:
                    turn.rest()
                    conversations.append(turn.first_data()["conversation_id"])
            wait_until(lambda: script.digests >= LOST, READY_WITHIN, f"{LOST} digests to start")
            first.kill()
            lapsed = time.monotonic() + TIMEOUT  # the lost jobs started before this, so are stuck by then
        with job_worker(settings, tmp_path, "b") as second:
            wait_until(lambda: "Worker starting" in second.log(), READY_WITHIN, "another worker to start")
            looking = max(lapsed, time.monotonic())  # its first sweep starts as it starts
            for conversation_id in conversations:
                wait_until(lambda c=conversation_id: entities_of(client, c) or None, 120,  # type: ignore[misc]
                           "another worker to finish the lost upkeep")
            elapsed = time.monotonic() - looking
    assert script.digests == 2 * LOST  # each lost once, finished once
    assert elapsed <= SWEEP + ABORT_WAIT + MARGIN, f"the lost jobs took {elapsed:.1f} s past their timeout"
