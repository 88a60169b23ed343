"""PostgreSQL stops in the middle of a turn and stays down past the turn's save: the turn's chat call,
which the failed save could not keep, still reaches the cost ledger once the database is back, once.

Against `memagent serve` on a private PostgreSQL cluster (never the shared one), with the offline
scripted model streaming slowly. The save gives up after `MEMAGENT_TURN__SAVE_RETRY`, hands the
turn's calls to the ledger's writer, and the database stays down a while longer: the writer must
keep them and write them when it is back, not drop the batch it could not write.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import asyncpg
import httpx
import pytest

from infrastructure.persistence.migrate import run_migrations
from tests.faults.pg_cluster import PgCluster, private_pg_cluster
from tests.integration.streaming_helpers import finished_message, long_query, open_chat, serving, wait_until

pytestmark = pytest.mark.integration

SETTINGS = {
    "MEMAGENT_LLM__SCRIPTED_CHUNK_DELAY": "0.2",
    "MEMAGENT_TURN__STOP_CHECK_INTERVAL": "0.05",
    "MEMAGENT_TURN__SWEEP_INTERVAL": "1",
    "MEMAGENT_TURN__SAVE_RETRY": "1",
    "MEMAGENT_AGENT__STREAM_THOUGHTS": "true",
    "MEMAGENT_EVENTS__KEEPALIVE": "1",
}
QUERY = long_query(30, "ledger")  # about 12 chunks 0.2 s apart: the database stops while it streams
DOWN_AFTER_SAVE = 4.0  # seconds the database stays down after the save gave up: the writer's tries fail


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


def chat_calls_of(cluster: PgCluster, message_id: str) -> int:
    """The ledger's rows of the message's own (chat) calls, read straight from the table."""

    async def count() -> int:
        connection = await asyncpg.connect(f"postgresql://postgres@127.0.0.1:{cluster.port}/postgres")
        try:
            return int(await connection.fetchval(
                "SELECT count(*) FROM model_calls WHERE message_id = $1 AND purpose = 'chat'", message_id))
        finally:
            await connection.close()

    return asyncio.run(count())


def test_a_turn_whose_save_failed_has_its_chat_call_in_the_ledger_once_the_database_is_back(
    client: httpx.Client, cluster: PgCluster
) -> None:
    with open_chat(client, QUERY) as stream:
        stream.nth_message(2)
        first: dict[str, Any] = stream.first_data()
        cluster.stop()
        stream.rest(limit=30)  # the answer ends, its save fails for SAVE_RETRY s, the turn ends
    assert stream.events[-2:] == ["error", "done"]
    time.sleep(DOWN_AFTER_SAVE)  # the ledger's writer meets the database down too
    cluster.start()
    message_id = first["message_id"]
    assert wait_until(lambda: chat_calls_of(cluster, message_id), 30, "the turn's chat call in the ledger") == 1
    finished_message(client, first["conversation_id"], message_id, limit=30)  # the sweep ended the record
    assert chat_calls_of(cluster, message_id) == 1  # written once, not once per try
