"""Redis loses everything in the middle of a turn: FLUSHALL, or a restart without persistence.

Against `memagent serve` on PostgreSQL + a private redis-server (never the shared one), with the
offline scripted model streaming slowly. What must hold: the stream ends with a terminal event
and `done`, never pings forever; ids never go back or repeat; the owner can still stop and follow
the turn; a lost client lease is not read as a client that left; the record gets a final status
with the query and the answer so far; and the next turn works.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.faults.served_on_private_redis import served_on_private_redis
from tests.integration.backends import RedisServer
from tests.integration.streaming_helpers import (
    SSEStream,
    answer_of,
    finished_message,
    long_query,
    open_chat,
    open_events,
    scripted_answer,
)

pytestmark = pytest.mark.integration

SETTINGS = {
    "MEMAGENT_LLM__SCRIPTED_CHUNK_DELAY": "0.2",
    "MEMAGENT_TURN__STOP_CHECK_INTERVAL": "0.05",
    "MEMAGENT_TURN__CLIENT_GRACE": "4",
    "MEMAGENT_TURN__WORKER_LEASE": "3",
    "MEMAGENT_TURN__SWEEP_INTERVAL": "1",
    "MEMAGENT_EVENTS__KEEPALIVE": "1",
    "MEMAGENT_AGENT__STREAM_THOUGHTS": "true",
}
QUERY = long_query(90, "flush")  # about 33 chunks 0.2 s apart: the loss lands mid-turn


@pytest.fixture(scope="module")
def client(redis_server: RedisServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    with served_on_private_redis(SETTINGS, redis_server, tmp_path_factory.mktemp("serve")) as http:
        yield http


def ids_of(stream: SSEStream) -> list[int]:
    return [f.id for f in stream.frames if f.id is not None]


def lose_everything(redis_server: RedisServer, how: str) -> None:
    if how == "flushall":
        with redis_server.client() as direct:
            direct.flushall()
    else:  # a restart without persistence: same port, empty
        redis_server.stop()
        redis_server.start()


@pytest.mark.parametrize("how", ["flushall", "restart"])
def test_a_turn_survives_redis_losing_everything_and_its_stream_ends(
    client: httpx.Client, redis_server: RedisServer, how: str
) -> None:
    with open_chat(client, QUERY) as stream:
        stream.nth_message(2)
        first: dict[str, Any] = stream.first_data()
        task_id, conversation_id, message_id = first["task_id"], first["conversation_id"], first["message_id"]
        time.sleep(1.0)
        lose_everything(redis_server, how)
        stream.rest(limit=40)  # never a hang: the stream ends by itself
    assert stream.events[-1] == "done"
    ids = ids_of(stream)
    assert ids == sorted(set(ids)), "ids go up and never repeat"
    stored = finished_message(client, conversation_id, message_id)
    assert stored["query"] == QUERY
    if stream.events[-2] == "agent_end":
        assert stored["status"] == "normal"
        assert answer_of(stream.frames) == scripted_answer(QUERY) == stored["answer"]
    else:  # a restart may cost the turn its event log: then it ends with an error, keeping its answer so far
        assert stream.events[-2] == "error"
        assert stored["status"] == "error"
        assert scripted_answer(QUERY).startswith(stored["answer"])
    with open_events(client, task_id, 0) as replay:  # what is left of the log is readable, above the old ids
        replay.rest(limit=20)
    assert ids_of(replay) == sorted(set(ids_of(replay)))
    after = client.post("/api/chat", json={"query": "still there?", "conversation_id": conversation_id})
    assert after.status_code == 200, after.text
    assert after.json()["status"] == "normal"


def test_after_a_flush_the_owner_can_still_stop_the_running_turn(
    client: httpx.Client, redis_server: RedisServer
) -> None:
    with open_chat(client, QUERY) as stream:
        stream.nth_message(2)
        first: dict[str, Any] = stream.first_data()
        lose_everything(redis_server, "flushall")
        time.sleep(1.5)  # the worker writes the task record again with its next lease renewal (a third of 3 s)
        stopped = client.post(f"/api/tasks/{first['task_id']}/stop")
        stream.rest(limit=20)
    assert stopped.status_code == 200, stopped.text
    assert stream.events[-2:] == ["stop", "done"]
    stored = finished_message(client, first["conversation_id"], first["message_id"])
    assert stored["status"] == "stop"
    assert stored["error"] == ""  # stopped by its owner, not taken for a client that left
    assert scripted_answer(QUERY).startswith(stored["answer"])
