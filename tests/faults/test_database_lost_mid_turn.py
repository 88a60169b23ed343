"""PostgreSQL stops in the middle of a turn and comes back: before the turn's save gives up, or after.

Against `memagent serve` on a private PostgreSQL cluster (never the shared one), with the offline
scripted model streaming slowly. What must hold: the stream ends with a terminal event and
`done`; a database back within `MEMAGENT_TURN__SAVE_RETRY` costs nothing (the save is retried);
one back later costs the turn its `normal` status but not its answer, and the cause stored is the
true one; and the next turn works.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from infrastructure.persistence.migrate import run_migrations
from tests.faults.pg_cluster import PgCluster, private_pg_cluster
from tests.integration.streaming_helpers import (
    answer_of,
    finished_message,
    long_query,
    open_chat,
    scripted_answer,
    serving,
)

pytestmark = pytest.mark.integration

SAVE_RETRY = 6.0
SETTINGS = {
    "MEMAGENT_LLM__SCRIPTED_CHUNK_DELAY": "0.2",
    "MEMAGENT_TURN__STOP_CHECK_INTERVAL": "0.05",
    "MEMAGENT_TURN__WORKER_LEASE": "2",
    "MEMAGENT_TURN__SWEEP_INTERVAL": "1",
    "MEMAGENT_TURN__SAVE_RETRY": str(SAVE_RETRY),
    "MEMAGENT_AGENT__STREAM_THOUGHTS": "true",
    "MEMAGENT_EVENTS__KEEPALIVE": "1",
}
QUERY = long_query(45, "db")  # about 18 chunks 0.2 s apart: 3.6 s of answer
DB_DOWN = "The database is unavailable; try again shortly."


@pytest.fixture(scope="module")
def cluster() -> Iterator[PgCluster]:
    with private_pg_cluster() as private:
        run_migrations(private.url)
        yield private


@pytest.fixture(scope="module")
def client(cluster: PgCluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    env = SETTINGS | {"MEMAGENT_DATABASE__URL": cluster.url}
    with serving(env, tmp_path_factory.mktemp("serve")) as service, \
            httpx.Client(base_url=service.base_url, timeout=30) as http:
        yield http


def test_a_database_back_before_the_save_gives_up_costs_the_turn_nothing(
    client: httpx.Client, cluster: PgCluster
) -> None:
    with open_chat(client, QUERY) as stream:
        stream.nth_message(2)
        first: dict[str, Any] = stream.first_data()
        cluster.stop()
        time.sleep(5.0)  # the answer ends meanwhile: its save fails and is retried
        cluster.start()
        stream.rest(limit=30)
    assert stream.events[-2:] == ["agent_end", "done"]
    stored = finished_message(client, first["conversation_id"], first["message_id"])
    assert (stored["query"], stored["status"]) == (QUERY, "normal")
    assert stored["answer"] == answer_of(stream.frames) == scripted_answer(QUERY)


def test_a_database_back_after_the_save_gave_up_keeps_the_answer_and_the_true_cause(
    client: httpx.Client, cluster: PgCluster
) -> None:
    with open_chat(client, QUERY) as stream:
        stream.nth_message(2)
        first: dict[str, Any] = stream.first_data()
        cluster.stop()
        stream.rest(limit=30)  # the answer ends, the save retries for SAVE_RETRY s, then the turn ends
    assert stream.events[-2:] == ["error", "done"]
    end = stream.frames[-2].data
    assert end["observation"] == DB_DOWN
    assert end["answer"] == scripted_answer(QUERY)  # the end carries the answer the record will keep
    cluster.start()
    stored = finished_message(client, first["conversation_id"], first["message_id"], limit=30)
    assert (stored["query"], stored["status"]) == (QUERY, "error")
    assert stored["answer"] == scripted_answer(QUERY)
    assert stored["error"] == DB_DOWN  # not "the server process stopped": it never did
    after = client.post("/api/chat", json={"query": "still there?", "conversation_id": first["conversation_id"]})
    assert after.status_code == 200, after.text
    assert after.json()["status"] == "normal"
