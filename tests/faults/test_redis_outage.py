"""Redis goes away under a running service, then comes back.

A private redis-server on a port of its own, PostgreSQL for the record. While Redis is down a
turn fails cleanly — a JSON error, or a stream that ends with `error` then `done` — and the
user's query stays in the database with status `error` (never lost, never left `running`); the
server keeps serving. Once Redis is back on the same port, the next turn succeeds, with the
history rebuilt from the database.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from infrastructure.persistence.migrate import run_migrations
from tests.integration.backends import (
    RedisServer,
    chat,
    history_texts,
    messages_of,
    pg_query,
    pg_url,
    private_redis,
    prompt_of,
    serving,
    throwaway_pg_database,
)
from tests.service import parse_sse

pytestmark = pytest.mark.integration

BEFORE = "Before the outage: my name is Ada."
DURING = "During the outage: am I still heard?"
DURING_STREAMED = "During the outage, streamed."
AFTER = "After the outage: what is my name?"


@pytest.fixture(scope="module")
def pg_database() -> Iterator[str]:
    with throwaway_pg_database() as name:
        run_migrations(pg_url(name))  # the CLI's own run is tested in test_migrate_command
        yield name


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    with private_redis(tmp_path) as server:
        yield server


def stored(database: str, conversation_id: str) -> list[tuple[str, str, str]]:
    rows = pg_query(
        database, "SELECT query, status, error FROM messages WHERE conversation_id = $1 ORDER BY seq",
        conversation_id,
    )
    return [(r["query"], r["status"], r["error"]) for r in rows]


def assert_failed_cleanly(response: httpx.Response) -> None:
    """Refused with a JSON error, a JSON turn result with status `error`, or a stream ending `error`, `done`.

    Which one depends on where Redis is first needed: registering the task (events on Redis)
    happens before the answer starts; reading the memory window happens inside the turn.
    """
    kind = response.headers["content-type"]
    if kind.startswith("application/json") and response.status_code != 200:
        assert response.status_code == 503, response.text
        body = response.json()
        assert set(body) == {"code", "message"}
        assert body["code"] in {"event_log_unavailable", "memory_unavailable"}
        message = body["message"]
    elif kind.startswith("application/json"):
        body = response.json()
        assert body["status"] == "error", body
        assert body["answer"] == ""
        message = body["error"]
    else:
        assert response.status_code == 200, response.text
        frames = parse_sse(response.text)
        assert [f["event"] for f in frames][-2:] == ["error", "done"], frames
        error = frames[-2]["data"]
        assert isinstance(error, dict)
        message = str(error.get("observation") or error.get("message"))
    assert_plain(message)


# What a client may be told when Redis fails: which store, never where it is or what raised.
PLAIN = {
    f"The {store} {failure}; try again shortly."
    for store in ("event store", "memory store")
    for failure in ("is unavailable", "did not answer in time", "refused the operation")
}
INTERNALS = ("redis://", "Redis at", "127.0.0.1", "Error", "Exception", "Traceback", "failed while")


def assert_plain(message: str) -> None:
    assert message in PLAIN, message
    assert not [word for word in INTERNALS if word in message], message


def post_turn(client: httpx.Client, query: str, conversation_id: str, stream: bool) -> httpx.Response:
    body = {"query": query, "conversation_id": conversation_id, "stream": stream}
    return client.post("/api/chat", json=body)


@pytest.mark.parametrize("events", ["redis", "inprocess"])
def test_a_turn_during_a_redis_outage_fails_cleanly_and_the_next_one_after_it_works(
    events: str, pg_database: str, redis_server: RedisServer, tmp_path: Path
) -> None:
    env = {
        "MEMAGENT_DATABASE__URL": pg_url(pg_database),
        "MEMAGENT_MEMORY__BACKEND": "redis",
        "MEMAGENT_EVENTS__BACKEND": events,
        "MEMAGENT_REDIS__URL": redis_server.url,
        "MEMAGENT_REDIS__KEY_PREFIX": "memagent-outage:",
    }
    with serving(env, tmp_path, timeout=60) as (service, client):
        before = chat(client, BEFORE)
        conversation = before["conversation_id"]

        redis_server.stop()
        failed = post_turn(client, DURING, conversation, stream=False)
        failed_streamed = post_turn(client, DURING_STREAMED, conversation, stream=True)
        assert service.process.poll() is None, "the server died with Redis"
        health = client.get("/healthz")
        during = stored(pg_database, conversation)

        redis_server.start()  # same port, empty: nothing was persisted
        after = chat(client, AFTER, conversation)
        prompt = prompt_of(client, after["message_id"])
        listed = messages_of(client, conversation)

    assert_failed_cleanly(failed)
    assert_failed_cleanly(failed_streamed)
    assert health.status_code == 200
    # The queries of the failed turns are kept, finished as errors that say what failed.
    assert [(query, status) for query, status, _ in during] == [
        (BEFORE, "normal"), (DURING, "error"), (DURING_STREAMED, "error"),
    ]
    for _, status, error in during:
        if status == "error":
            assert_plain(error)
    # Back to normal: only completed turns are history, rebuilt from the database.
    assert history_texts(prompt) == [BEFORE, before["answer"]]
    assert listed == [(BEFORE, "normal"), (DURING, "error"), (DURING_STREAMED, "error"), (AFTER, "normal")]


# --- Redis dies while a turn is running ----------------------------------------------------------

LONG_QUERY = " ".join(f"word{i}" for i in range(40))  # the scripted model echoes it: many chunks


def stream_and_kill_redis(
    client: httpx.Client, redis_server: RedisServer, query: str
) -> list[dict[str, object]]:
    """A streamed turn; Redis is stopped as soon as its first answer chunk arrives."""
    body = ""
    with client.stream("POST", "/api/chat", json={"query": query, "stream": True}) as response:
        assert response.status_code == 200
        for text in response.iter_text():
            body += text
            if redis_server.process is not None and "event: agent_message" in body:
                redis_server.stop()
    return parse_sse(body)


def slow_env(pg_database: str, redis_server: RedisServer, events: str) -> dict[str, str]:
    return {
        "MEMAGENT_DATABASE__URL": pg_url(pg_database),
        "MEMAGENT_MEMORY__BACKEND": "redis",
        "MEMAGENT_EVENTS__BACKEND": events,
        "MEMAGENT_REDIS__URL": redis_server.url,
        "MEMAGENT_REDIS__KEY_PREFIX": "memagent-outage:",
        "MEMAGENT_LLM__SCRIPTED_CHUNK_DELAY": "0.1",
    }


def single_message(database: str, conversation_id: str) -> tuple[str, str, str]:
    rows = pg_query(database, "SELECT status, answer, error FROM messages WHERE conversation_id = $1",
                    conversation_id)
    assert len(rows) == 1
    return rows[0]["status"], rows[0]["answer"], rows[0]["error"]


def test_losing_the_event_log_mid_turn_ends_the_stream_with_an_error_and_keeps_the_query(
    pg_database: str, redis_server: RedisServer, tmp_path: Path
) -> None:
    env = slow_env(pg_database, redis_server, events="redis")
    with serving(env, tmp_path, timeout=60) as (service, client):
        frames = stream_and_kill_redis(client, redis_server, LONG_QUERY)
        conversation = str(frames[0]["data"]["conversation_id"])  # type: ignore[index]
        # The worker finds out at its next publish and records the turn as failed.
        status = wait_for_status(pg_database, conversation)
        assert service.process.poll() is None
        redis_server.start()
        after = chat(client, "Back again.", conversation)
        prompt = prompt_of(client, after["message_id"])

    assert [f["event"] for f in frames][-2:] == ["error", "done"]
    assert status[0] == "error"
    assert_plain(status[2])
    assert history_texts(prompt) == []  # a failed turn is no history


def test_losing_the_memory_cache_after_recall_does_not_fail_a_saved_turn(
    pg_database: str, redis_server: RedisServer, tmp_path: Path
) -> None:
    """The window was read before Redis went; the answer is complete and saved as `normal`.

    Failing to update a cache must not report the turn as an error: the database, which is
    the record, says it succeeded, and the next turn rebuilds the window from it.
    """
    env = slow_env(pg_database, redis_server, events="inprocess")
    with serving(env, tmp_path, timeout=60) as (service, client):
        frames = stream_and_kill_redis(client, redis_server, LONG_QUERY)
        conversation = str(frames[0]["data"]["conversation_id"])  # type: ignore[index]
        status, answer, _ = wait_for_status(pg_database, conversation)
        redis_server.start()
        after = chat(client, "Back again.", conversation)
        prompt = prompt_of(client, after["message_id"])

    assert status == "normal"
    assert LONG_QUERY in answer
    assert history_texts(prompt) == [LONG_QUERY, answer]
    # What the client was told agrees with the record.
    assert [f["event"] for f in frames][-2:] == ["agent_end", "done"], frames[-2]


def wait_for_status(database: str, conversation_id: str, limit: float = 20.0) -> tuple[str, str, str]:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        found = single_message(database, conversation_id)
        if found[0] != "running":
            return found
        time.sleep(0.1)
    raise AssertionError(f"the message of {conversation_id} is still running after {limit} s")
