"""Migration 0012 on SQLite and PostgreSQL: a turn the input review refused before the upgrade (its
step says so) is marked `blocked_by = 'input'`, so it stays out of a window rebuilt afterwards;
every other turn is left unmarked."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from infrastructure.persistence.migrate import alembic_config
from infrastructure.persistence.urls import normalise_url
from tests.integration.backends import pg_url, throwaway_pg_database
from tests.integration.db_fixtures import sqlite_url

pytestmark = pytest.mark.integration

REFUSED_STEP = "The input review matched a blocked keyword; the preset answer ended the turn."
AT = datetime(2026, 1, 1, tzinfo=UTC)
CONVERSATION = text(
    "INSERT INTO conversations (id, app_id, owner, summary, created_at, updated_at)"
    " VALUES ('c1', 'a', 'o', '', :at, :at)"
)
MESSAGE = text(
    "INSERT INTO messages (id, conversation_id, owner, task_id, query, image_urls, answer, status, error, prompt,"
    " prompt_tokens, completion_tokens, total_price, latency, created_at, updated_at)"
    " VALUES (:id, 'c1', 'o', :id, 'q', '[]', 'Sorry.', 'normal', '', '', 0, 0, 0, 0, :at, :at)"
)
STEP = text(
    "INSERT INTO message_agent_thoughts (id, message_id, position, event, thought, tool, tool_input, observation,"
    " prompt, answer, prompt_tokens, completion_tokens, price, latency, created_at)"
    " VALUES (:id, :id, 0, 'agent_message', :thought, '', '{}', '', '', 'Sorry.', 0, 0, 0, 0, :at)"
)
THOUGHTS = {"refused": REFUSED_STEP, "answered": ""}


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield sqlite_url(tmp_path / "memagent.db")
        return
    with throwaway_pg_database() as name:
        yield pg_url(name)


async def _insert_turns(url: str) -> None:
    """A refused turn and an answered one, each with the step its run recorded."""
    engine = create_async_engine(normalise_url(url))
    try:
        async with engine.begin() as connection:
            await connection.execute(CONVERSATION, {"at": AT})
            for message, thought in THOUGHTS.items():
                await connection.execute(MESSAGE, {"id": message, "at": AT})
                await connection.execute(STEP, {"id": message, "thought": thought, "at": AT})
    finally:
        await engine.dispose()


async def _marks(url: str) -> list[tuple[str, str | None]]:
    engine = create_async_engine(normalise_url(url))
    try:
        async with engine.connect() as connection:
            rows = await connection.execute(text("SELECT id, blocked_by FROM messages ORDER BY id"))
            return [(row.id, row.blocked_by) for row in rows]
    finally:
        await engine.dispose()


async def test_turns_refused_before_the_upgrade_are_marked_by_their_step(url: str) -> None:
    config = alembic_config(normalise_url(url))
    await asyncio.to_thread(command.upgrade, config, "0011")  # env.py runs its own event loop
    await _insert_turns(url)

    await asyncio.to_thread(command.upgrade, config, "head")

    assert await _marks(url) == [("answered", None), ("refused", "input")]
