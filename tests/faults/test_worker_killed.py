"""A worker that dies mid-turn (SIGKILL: no shutdown, no last words) never leaves its turn
`running`: another worker's periodic sweep, or the same server's start-up sweep, ends it with
status `error` and a reason, and followers get an `error` event then `done`.
"""

from __future__ import annotations

import signal
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from application.tasks.sweep_stale_turns import WORKER_GONE
from tests.integration.streaming_helpers import (
    SSEStream,
    finished_message,
    long_query,
    open_chat,
    open_events,
    scripted_answer,
    serving,
    shared_backends,
    two_workers,
)
from tests.service import Service

pytestmark = pytest.mark.integration

WORKER_LEASE = 1.0
SWEEP_INTERVAL = 0.5
SETTINGS = {
    "MEMAGENT_LLM__SCRIPTED_CHUNK_DELAY": "0.05",
    "MEMAGENT_TURN__STOP_CHECK_INTERVAL": "0.05",
    "MEMAGENT_TURN__WORKER_LEASE": str(WORKER_LEASE),
    "MEMAGENT_TURN__SWEEP_INTERVAL": str(SWEEP_INTERVAL),
    "MEMAGENT_EVENTS__KEEPALIVE": "0.5",
}
LONG_TURN = long_query(600, "killed")  # about 10 s of answer: the kill always lands mid-turn


def kill(service: Service) -> float:
    service.process.send_signal(signal.SIGKILL)
    service.process.wait(timeout=10)
    return time.monotonic()


@contextmanager
def long_turn_on_a(tmp_path: Path) -> Iterator[tuple[Service, httpx.Client, SSEStream]]:
    """Two workers on shared PostgreSQL and Redis; a long turn streaming from worker A; a client of B."""
    with (
        shared_backends(SETTINGS) as env,
        two_workers(env, tmp_path) as (worker_a, worker_b),
        httpx.Client(base_url=worker_a.base_url, timeout=10) as a,
        httpx.Client(base_url=worker_b.base_url, timeout=10) as b,
        open_chat(a, LONG_TURN) as on_a,
    ):
        yield worker_a, b, on_a


def test_another_workers_sweep_ends_the_turn_of_a_killed_worker_with_an_error_event_and_status(tmp_path: Path) -> None:
    with long_turn_on_a(tmp_path) as (worker_a, b, on_a):
        on_a.nth_message(2)
        first = on_a.first_data()
        task_id, conversation_id, message_id = first["task_id"], first["conversation_id"], first["message_id"]
        live_query = long_query(150, "survivor")  # B's own turn runs across several of B's sweeps
        with open_events(b, task_id) as follower, open_chat(b, live_query) as on_b:
            follower.nth_message(2)
            on_b.nth_message(1)
            killed_at = kill(worker_a)
            follower.rest(limit=15)
            on_b.rest()
        ended_at = follower.frames[-2].at
        stored = finished_message(b, conversation_id, message_id)
        with open_events(b, task_id, 0) as replay:
            replay.rest(limit=5)

    assert follower.events[-2:] == ["error", "done"]
    error = follower.frames[-2].data
    assert error["observation"] == WORKER_GONE
    assert (error["task_id"], error["message_id"]) == (task_id, message_id)
    ids = [f.id for f in follower.logged]
    assert ids[:-1] == list(range(1, len(ids)))
    assert ids[-1] > ids[-2] + 100  # the sweep's event skips past ids the dead worker may have handed out
    assert error["answer"] == stored["answer"] != ""  # the partial answer, as the stored message keeps it
    assert ended_at - killed_at < WORKER_LEASE + SWEEP_INTERVAL + 3
    assert stored["status"] == "error"
    assert stored["error"] == WORKER_GONE
    assert stored["answer"] != scripted_answer(LONG_TURN)
    assert replay.events[-2:] == ["error", "done"]  # and so it replays, for as long as events are kept
    # The worker that is alive keeps its own turn: the sweep only ends turns whose worker is gone.
    assert on_b.events[-2:] == ["agent_end", "done"]


def test_a_follower_ahead_of_the_log_after_its_worker_died_still_gets_the_end(tmp_path: Path) -> None:
    # A worker hands its own followers events before Redis has stored them: killed then, its
    # followers have seen ids the log lacks. Resumed on another worker, they still get the end.
    with long_turn_on_a(tmp_path) as (worker_a, b, on_a):
        on_a.nth_message(3)
        task_id = on_a.first_data()["task_id"]
        killed_at = kill(worker_a)
        # Ids the log never got (more than the worker could store meanwhile: the test's own margin).
        with open_events(b, task_id, on_a.last_id + 500) as ahead:
            ahead.rest(limit=15)
        ended_at = ahead.frames[-2].at
        seen_the_end = b.get(f"/api/tasks/{task_id}/events", headers={"Last-Event-ID": str(ahead.last_id)})

    assert ahead.events == ["error", "done"]
    error = next(f for f in ahead.frames if f.event == "error")
    assert error.data["observation"] == WORKER_GONE
    assert error.data["answer"]  # what streamed before the worker died
    assert ended_at - killed_at < WORKER_LEASE + SWEEP_INTERVAL + 3
    assert seen_the_end.status_code == 204  # having seen the end, an EventSource stops


def sqlite_status(db: Path, message_id: str) -> str:
    with sqlite3.connect(db) as connection:
        row = connection.execute("SELECT status FROM messages WHERE id = ?", (message_id,)).fetchone()
    assert row is not None
    return str(row[0])


def test_the_start_up_sweep_ends_a_turn_left_running_by_a_killed_server(tmp_path: Path) -> None:
    db = tmp_path / "memagent.db"
    # Sweeps an hour apart: only the one at start-up can end the turn within this test.
    env = SETTINGS | {"MEMAGENT_DATABASE__URL": f"sqlite+aiosqlite:///{db}", "MEMAGENT_TURN__SWEEP_INTERVAL": "3600"}
    with (
        serving(env, tmp_path) as first_run,
        httpx.Client(base_url=first_run.base_url, timeout=10) as http,
        open_chat(http, LONG_TURN) as stream,
    ):
        stream.nth_message(2)
        first_event = stream.logged[0]  # a keep-alive may come first when the machine is busy
        started = first_event.at - first_event.data["latency"]
        first = stream.first_data()
        kill(first_run)
    assert sqlite_status(db, first["message_id"]) == "running"  # the killed server left it so
    # The sweep ends turns older than one worker lease; make sure this one is, before restarting.
    time.sleep(max(0.0, started + WORKER_LEASE + 0.2 - time.monotonic()))

    with serving(env, tmp_path) as second_run, httpx.Client(base_url=second_run.base_url, timeout=10) as http:
        stored = finished_message(http, first["conversation_id"], first["message_id"], limit=10)
        assert stored["status"] == "error"
        assert stored["error"] == WORKER_GONE
        after = http.post("/api/chat", json={"query": "still works", "conversation_id": first["conversation_id"]})
        assert after.status_code == 200, after.text
        assert after.json()["status"] == "normal"
