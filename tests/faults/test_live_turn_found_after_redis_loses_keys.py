"""A live turn is never answered 404 because Redis lost its keys (FLUSHALL, or a restart without
persistence) in the middle of it.

The turn's task record (owner, ids) lives in Redis; its worker writes it again only with its next
lease renewal or client check. These settings put those far apart, so every request below lands
while Redis holds no record of the turn: stop and follow must find the task from its message in
PostgreSQL, and write its record again so that the stop flag reaches the worker.

Against `memagent serve` on PostgreSQL + a private redis-server (never the shared one), with the
offline scripted model streaming slowly.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.faults.served_on_private_redis import served_on_private_redis
from tests.integration.backends import RedisServer
from tests.integration.streaming_helpers import (
    TERMINAL,
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
    # The worker rewrites its task record every third of a lease (20 s) and on a client check that
    # finds its lease lost (every tenth of the grace: 30 s), both first at the turn's start: the
    # record stays missing for the rest of a turn of a few seconds.
    "MEMAGENT_TURN__WORKER_LEASE": "60",
    "MEMAGENT_TURN__CLIENT_GRACE": "300",
    "MEMAGENT_EVENTS__KEEPALIVE": "1",
}
QUERY = long_query(90, "lost")  # about 33 chunks 0.2 s apart: the loss lands mid-turn


@pytest.fixture(scope="module")
def client(redis_server: RedisServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    with served_on_private_redis(SETTINGS, redis_server, tmp_path_factory.mktemp("serve")) as http:
        yield http


def lose_every_key(redis_server: RedisServer, how: str) -> None:
    if how == "flushall":
        with redis_server.client() as direct:
            direct.flushall()
    else:  # a restart without persistence: same port, empty
        redis_server.stop()
        redis_server.start()


@pytest.mark.parametrize("how", ["flushall", "restart"])
def test_a_stop_right_after_redis_lost_its_keys_stops_the_running_turn(
    client: httpx.Client, redis_server: RedisServer, how: str
) -> None:
    with open_chat(client, QUERY) as stream:
        stream.nth_message(2)
        first: dict[str, Any] = stream.first_data()
        lose_every_key(redis_server, how)
        stopped = client.post(f"/api/tasks/{first['task_id']}/stop")
        stream.rest(limit=20)
    assert stopped.status_code == 200, stopped.text
    assert stopped.json() == {"task_id": first["task_id"], "result": "stopped", "status": "stop"}
    assert stream.events[-2:] == ["stop", "done"]
    stored = finished_message(client, first["conversation_id"], first["message_id"])
    assert stored["status"] == "stop"
    assert scripted_answer(QUERY).startswith(stored["answer"])


@pytest.mark.parametrize("how", ["flushall", "restart"])
def test_a_follower_arriving_right_after_redis_lost_its_keys_follows_the_turn_to_its_end(
    client: httpx.Client, redis_server: RedisServer, how: str
) -> None:
    with open_chat(client, QUERY) as stream:
        stream.nth_message(2)
        first: dict[str, Any] = stream.first_data()
        lose_every_key(redis_server, how)
        with open_events(client, first["task_id"], stream.last_id) as follower:
            follower.rest(limit=30)
        stream.rest(limit=30)
    assert follower.events[-1] == "done"
    assert follower.events[-2] in TERMINAL, follower.events
    stored = finished_message(client, first["conversation_id"], first["message_id"])
    assert stored["status"] != "running"
