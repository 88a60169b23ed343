"""Two `memagent serve` workers sharing one PostgreSQL database and one Redis: a turn started on
one worker is followed, resumed and stopped through the other (docs/ARCHITECTURE.md §4), over HTTP.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest

from tests.integration.streaming_helpers import (
    answer_of,
    finished_message,
    long_query,
    message_of,
    open_chat,
    open_events,
    same_events,
    scripted_answer,
    shared_backends,
    two_workers,
)

pytestmark = pytest.mark.integration

SETTINGS = {
    "MEMAGENT_LLM__SCRIPTED_CHUNK_DELAY": "0.05",
    "MEMAGENT_TURN__STOP_CHECK_INTERVAL": "0.05",
    "MEMAGENT_EVENTS__KEEPALIVE": "0.5",
}


@pytest.fixture(scope="module")
def workers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[httpx.Client, httpx.Client]]:
    with (
        shared_backends(SETTINGS) as env,
        two_workers(env, tmp_path_factory.mktemp("workers")) as (a, b),
        httpx.Client(base_url=a.base_url, timeout=10) as on_a,
        httpx.Client(base_url=b.base_url, timeout=10) as on_b,
    ):
        yield on_a, on_b


def test_a_turn_started_on_one_worker_is_followed_and_resumed_through_another(
    workers: tuple[httpx.Client, httpx.Client],
) -> None:
    a, b = workers
    query = long_query(120, "follow-on-b")
    with open_chat(a, query) as on_a:
        on_a.nth_message(3)
        first = on_a.first_data()
        task_id, conversation_id, message_id = first["task_id"], first["conversation_id"], first["message_id"]
        assert message_of(b, conversation_id, message_id)["status"] == "running"  # B sees it live
        resume_after = on_a.last_id - 1
        with open_events(b, task_id) as from_start, open_events(b, task_id, resume_after) as resumed:
            on_a.rest()
            from_start.rest()
            resumed.rest()
    assert on_a.events[-2:] == ["agent_end", "done"]
    assert answer_of(on_a.frames) == scripted_answer(query)
    assert same_events(from_start.frames) == same_events(on_a.frames)
    assert same_events(resumed.frames) == same_events(on_a.frames)[resume_after:]
    assert resumed.logged[0].id == resume_after + 1
    assert from_start.events[-1] == resumed.events[-1] == "done"
    assert finished_message(b, conversation_id, message_id)["status"] == "normal"


def test_a_finished_turn_of_one_worker_replays_in_full_on_the_other(
    workers: tuple[httpx.Client, httpx.Client],
) -> None:
    a, b = workers
    with open_chat(a, "replay me elsewhere") as on_a:
        on_a.rest()
    with open_events(b, on_a.first_data()["task_id"], 0) as on_b:
        on_b.rest(limit=5)
    assert same_events(on_b.frames) == same_events(on_a.frames)


def test_a_turn_on_one_worker_is_stopped_through_another(workers: tuple[httpx.Client, httpx.Client]) -> None:
    a, b = workers
    query = long_query(200, "stop-via-b")
    with open_chat(a, query) as on_a:
        on_a.nth_message(2)
        first = on_a.first_data()
        task_id, conversation_id, message_id = first["task_id"], first["conversation_id"], first["message_id"]
        with open_events(b, task_id) as follower:
            follower.nth_message(2)
            asked = time.monotonic()
            response = b.post(f"/api/tasks/{task_id}/stop")
            assert response.status_code == 200, response.text
            on_a.rest()
            follower.rest()
    assert on_a.events[-2:] == ["stop", "done"]
    assert follower.events[-2:] == ["stop", "done"]
    assert on_a.frames[-2].at - asked < 2.5  # within a stop check (50 ms), with room for a busy machine
    streamed = answer_of(on_a.frames)
    assert streamed
    assert streamed != scripted_answer(query)
    for client in (a, b):
        stored = finished_message(client, conversation_id, message_id)
        assert stored["status"] == "stop"
        assert stored["answer"] == streamed
    again = a.post(f"/api/tasks/{task_id}/stop")
    assert again.status_code == 409
    assert "'stop'" in again.json()["message"]
