"""A flushed Redis loses no tier of memory: SQL is the record of every one of them.

PostgreSQL + Redis backends, with a private redis-server (as test_redis_flush.py) so that FLUSHALL
touches only this test's data. An end user's facts, a conversation's entities, an archive entry
and a summary are learnt; Redis is flushed; the memory APIs answer all of it again, the entity
cache is warmed from the record, and the next turns' prompts hold all of it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from domain.agents.prompt import ARCHIVE_HEADER, EARLIER_HEADER
from infrastructure.persistence.migrate import run_migrations
from tests.integration.backends import (
    RedisServer,
    history_texts,
    pg_url,
    private_redis,
    prompt_of,
    serving,
    throwaway_pg_database,
)
from tests.integration.user_memory_world import LESSON, SMALL_MEMORY, memory_reads, say, system_of, teach

pytestmark = pytest.mark.integration

ANN = "ann"
PREFIX = "memagent-memory-flush:"


@pytest.fixture
def pg_database() -> Iterator[str]:
    with throwaway_pg_database() as name:
        run_migrations(pg_url(name))
        yield name


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    with private_redis(tmp_path) as server:
        yield server


def test_after_flushall_every_tier_comes_back_from_the_database(
    pg_database: str, redis_server: RedisServer, tmp_path: Path
) -> None:
    env = {
        "MEMAGENT_DATABASE__URL": pg_url(pg_database),
        "MEMAGENT_MEMORY__BACKEND": "redis",
        "MEMAGENT_EVENTS__BACKEND": "redis",
        "MEMAGENT_REDIS__URL": redis_server.url,
        "MEMAGENT_REDIS__KEY_PREFIX": PREFIX,
        **SMALL_MEMORY,
    }
    redis = redis_server.client()
    with serving(env, tmp_path) as (_, http):
        turns = teach(http, ANN)
        conversation = turns[0]["conversation_id"]
        before = memory_reads(http, ANN, conversation)
        cached = [f"{PREFIX}{kind}:{conversation}" for kind in ("entity", "archive", "window")]
        assert all(redis.exists(key) for key in cached), "memory was not cached in Redis"

        redis.flushall()
        assert redis.dbsize() == 0

        after = memory_reads(http, ANN, conversation)
        warmed = redis.exists(f"{PREFIX}entity:{conversation}")
        next_turn = say(http, ANN, "What was my flight code and seat number?", conversation)
        system = system_of(http, next_turn["message_id"])
        window = history_texts(prompt_of(http, next_turn["message_id"]))
        elsewhere = system_of(http, say(http, ANN, "Where do I live?")["message_id"])
    redis.close()

    assert after == before
    assert warmed, "the entities read from the record were not cached again"
    [entry] = after["conversation"]["archive"]
    for line in ("- name: Ada", "- city: Lisbon", "- likes: teal", "- flight_code: KX42", "- seat_number: 17C",
                 "- task: renew my passport", f"{ARCHIVE_HEADER}\n- {entry['summary']}"):
        assert line in system
    assert window[::2] == LESSON[-2:]  # rebuilt from the messages
    assert "- city: Lisbon" in elsewhere
    assert f"{EARLIER_HEADER}\n- (conversation {conversation})" in elsewhere
