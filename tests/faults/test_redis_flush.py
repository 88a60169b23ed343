"""A flushed Redis loses nothing that matters: the database is the durable record.

PostgreSQL + Redis backends, with a private redis-server so that FLUSHDB touches only this
test's data. After the flush, the next turn's prompt still holds the last `dialog_round` turns
(rebuilt from the message store) and the conversation's long-term summary.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from infrastructure.persistence.migrate import run_migrations
from tests.integration.backends import (
    RedisServer,
    chat,
    history_texts,
    pg_query,
    pg_url,
    private_redis,
    prompt_of,
    serving,
    texts,
    throwaway_pg_database,
)

pytestmark = pytest.mark.integration

SUMMARY = "The user is Zed, a lighthouse keeper in Brittany who prefers short answers."
QUERIES = ["Remember alpha.", "Remember bravo.", "Remember charlie."]


@pytest.fixture
def pg_database() -> Iterator[str]:
    with throwaway_pg_database() as name:
        run_migrations(pg_url(name))  # the CLI's own run is tested in test_migrate_command
        yield name


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    with private_redis(tmp_path) as server:
        yield server


def test_after_flushdb_the_window_and_summary_come_back_from_the_database(
    pg_database: str, redis_server: RedisServer, tmp_path: Path
) -> None:
    prefix = "memagent-flush:"
    env = {
        "MEMAGENT_DATABASE__URL": pg_url(pg_database),
        "MEMAGENT_MEMORY__BACKEND": "redis",
        "MEMAGENT_EVENTS__BACKEND": "redis",
        "MEMAGENT_REDIS__URL": redis_server.url,
        "MEMAGENT_REDIS__KEY_PREFIX": prefix,
        "MEMAGENT_AGENT__DIALOG_ROUND": "2",
        # No summary upkeep: it would race to replace the summary this test writes.
        "MEMAGENT_AGENT__SUMMARY_ENABLED": "false",
    }
    redis = redis_server.client()
    with serving(env, tmp_path) as (_, client):
        first = chat(client, QUERIES[0])
        conversation = first["conversation_id"]
        answers = [first["answer"]] + [chat(client, q, conversation)["answer"] for q in QUERIES[1:]]
        # The summary the long-term upkeep would have written, straight into the record.
        pg_query(pg_database, "UPDATE conversations SET summary = $1 WHERE id = $2", SUMMARY, conversation)
        window_key = f"{prefix}window:{conversation}"
        assert redis.exists(window_key), "the window was not cached in Redis"

        redis.flushdb()
        assert not redis.exists(window_key)

        after = chat(client, "What do you remember?", conversation)
        prompt = prompt_of(client, after["message_id"])
        rebuilt = redis.exists(window_key)
    redis.close()

    # The last two turns, rebuilt from PostgreSQL, oldest first; the first one is past dialog_round.
    assert history_texts(prompt) == [QUERIES[1], answers[1], QUERIES[2], answers[2]]
    assert SUMMARY in texts(prompt[0])
    assert texts(prompt[-1]) == "What do you remember?"
    assert rebuilt, "the rebuilt window was not cached again"
