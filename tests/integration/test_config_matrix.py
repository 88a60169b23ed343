"""One chat scenario through the real service under every combination of backends.

database (SQLite file | PostgreSQL migrated with `memagent migrate`) × MEMAGENT_MEMORY__BACKEND
× MEMAGENT_EVENTS__BACKEND (inprocess | redis): eight starts of `memagent serve`, each with its
own Redis key prefix. Besides the HTTP answers, each run checks that the configured backends
were the ones used — the rows are in that database, the keys under that prefix — and that a
configuration without a Redis backend never needs Redis at all.
"""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.backends import (
    chat,
    delete_prefix,
    history_texts,
    messages_of,
    migrate,
    new_prefix,
    pg_query,
    pg_url,
    prefix_keys,
    prompt_of,
    serving,
    shared_redis_url,
    stream_chat,
    texts,
    throwaway_pg_database,
)
from tests.integration.db_fixtures import sqlite_url

pytestmark = pytest.mark.integration

BACKENDS = ["inprocess", "redis"]
COMBINATIONS = list(itertools.product(["sqlite", "postgresql"], BACKENDS, BACKENDS))
# Nothing listens on port 1: a run that needs no Redis must not notice.
DEAD_REDIS = "redis://127.0.0.1:1/0"

FIRST = "My favourite colour is teal."
SECOND = "Which colour do I like?"


@pytest.fixture(scope="module")
def pg_database() -> Iterator[str]:
    """One throwaway database for all the PostgreSQL runs, migrated by the CLI as an operator would."""
    with throwaway_pg_database() as name:
        migrate(pg_url(name))
        yield name


def stored_queries(database: str, location: str, conversation_id: str) -> list[str]:
    sql = "SELECT query FROM messages WHERE conversation_id = {} ORDER BY seq"
    if database == "sqlite":
        with sqlite3.connect(location) as db:
            return [row[0] for row in db.execute(sql.format("?"), (conversation_id,))]
    return [row["query"] for row in pg_query(location, sql.format("$1"), conversation_id)]


@pytest.mark.parametrize(
    ("database", "memory", "events"), COMBINATIONS, ids=["-".join(c) for c in COMBINATIONS]
)
def test_two_turns_work_the_same_on_every_backend(
    database: str, memory: str, events: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    uses_redis = "redis" in (memory, events)
    redis_url = shared_redis_url() if uses_redis else DEAD_REDIS
    prefix = new_prefix()
    if database == "sqlite":
        location = str(tmp_path / "data" / "memagent.db")
        database_url = sqlite_url(Path(location))
    else:
        location = request.getfixturevalue("pg_database")
        database_url = pg_url(location)
    env = {
        "MEMAGENT_DATABASE__URL": database_url,
        "MEMAGENT_MEMORY__BACKEND": memory,
        "MEMAGENT_EVENTS__BACKEND": events,
        "MEMAGENT_REDIS__URL": redis_url,
        "MEMAGENT_REDIS__KEY_PREFIX": prefix,
    }

    try:
        with serving(env, tmp_path) as (_, client):
            first = chat(client, FIRST)
            conversation = first["conversation_id"]
            frames = stream_chat(client, SECOND, conversation)
            prompt = prompt_of(client, str(frames[0]["data"]["message_id"]))  # type: ignore[index]
            listed = messages_of(client, conversation)
            keys = prefix_keys(redis_url, prefix) if uses_redis else set()
    finally:
        if uses_redis:
            delete_prefix(redis_url, prefix)

    # The streamed second turn: recall first, then the answer, agent_end, done.
    kinds = [f["event"] for f in frames]
    assert kinds[0] == "long_term_memory_recall"
    assert "agent_message" in kinds
    assert kinds[-2:] == ["agent_end", "done"]
    second = frames[0]["data"]
    assert isinstance(second, dict)
    assert second["conversation_id"] == conversation
    # Its prompt snapshot holds the first exchange as history, then the new question.
    assert history_texts(prompt) == [FIRST, first["answer"]]
    assert texts(prompt[-1]) == SECOND
    assert listed == [(FIRST, "normal"), (SECOND, "normal")]

    # The configured backends were the ones used.
    assert stored_queries(database, location, conversation) == [FIRST, SECOND]
    assert (f"{prefix}window:{conversation}" in keys) == (memory == "redis")
    task_keys = {f"{prefix}task:{first['task_id']}", f"{prefix}events:{first['task_id']}",
                 f"{prefix}task:{second['task_id']}", f"{prefix}events:{second['task_id']}"}
    assert (task_keys <= keys) == (events == "redis")
    assert not (task_keys & keys) or events == "redis"
