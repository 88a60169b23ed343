"""`memagent prune [--dry-run]` as a process, on SQLite and on PostgreSQL with Redis, over turns and
a workflow run a real `memagent serve` ran (then aged in SQL): the dry run prints each kind's count
and removes nothing, the prune removes exactly that, and the service then lists, searches and reads only what
is left. And `memagent serve` prunes by itself every MEMAGENT_RETENTION__INTERVAL, then stops cleanly."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, TypeVar

import pytest
from sqlalchemy import func, select, update

from infrastructure.persistence.database import Database
from infrastructure.persistence.rows import Base, ConversationRow, MessageAgentThoughtRow, MessageRow
from infrastructure.persistence.workflow_run_rows import NodeRunRow, WorkflowRunRow
from tests.integration.backends import (
    chat,
    delete_prefix,
    memagent,
    migrate,
    new_prefix,
    pg_url,
    serving,
    shared_redis_url,
    throwaway_pg_database,
)
from tests.integration.db_fixtures import sqlite_url
from tests.workflow_graphs import SIMPLE

if TYPE_CHECKING:
    from pathlib import Path

    import httpx
    from sqlalchemy import ColumnElement
    from sqlalchemy.ext.asyncio import AsyncSession

pytestmark = pytest.mark.integration

T, M, C, W = MessageAgentThoughtRow, MessageRow, ConversationRow, WorkflowRunRow
R = TypeVar("R")
KINDS = ("deleted_conversations", "conversation_messages", "conversation_steps", "conversation_workflow_runs",
         "conversation_node_runs", "steps", "prompt_snapshots", "model_calls", "workflow_runs", "node_runs")


@pytest.fixture(params=["sqlite", "postgresql"])
def env(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[dict[str, str]]:
    if request.param == "sqlite":
        yield {"MEMAGENT_DATABASE__URL": sqlite_url(tmp_path / "memagent.db"), "MEMAGENT_RETENTION__INTERVAL": "0"}
        return
    redis_url, prefix = shared_redis_url(), new_prefix()
    with throwaway_pg_database() as name:
        migrate(pg_url(name))
        try:
            yield {"MEMAGENT_DATABASE__URL": pg_url(name), "MEMAGENT_RETENTION__INTERVAL": "0",
                   "MEMAGENT_MEMORY__BACKEND": "redis", "MEMAGENT_EVENTS__BACKEND": "redis",
                   "MEMAGENT_REDIS__URL": redis_url, "MEMAGENT_REDIS__KEY_PREFIX": prefix}
        finally:
            delete_prefix(redis_url, prefix)


def on_database(url: str, work: Callable[[AsyncSession], Awaitable[R]]) -> R:
    async def run() -> R:
        database = Database(url)
        try:
            async with database.transaction("test") as session:
                return await work(session)
        finally:
            await database.dispose()

    return asyncio.run(run())


def age_everything(url: str, days: int) -> None:
    """Every turn, step, workflow run and delete happened `days` ago; every step and message holds a prompt."""
    old = datetime.now(UTC) - timedelta(days=days)

    async def work(session: AsyncSession) -> None:
        await session.execute(update(T).values(created_at=old, prompt="the prompt"))
        await session.execute(update(M).values(created_at=old, prompt="the prompt"))
        await session.execute(update(C).where(C.deleted_at.is_not(None)).values(deleted_at=old))
        await session.execute(update(W).values(started_at=old))

    on_database(url, work)


def count(url: str, table: type[Base], *where: ColumnElement[bool]) -> int:
    async def work(session: AsyncSession) -> int:
        return int(await session.scalar(select(func.count()).select_from(table).where(*where)) or 0)

    return on_database(url, work)


def printed(stdout: str) -> dict[str, int]:
    rows = dict(line.split("\t", 1) for line in stdout.splitlines() if "\t" in line)
    return {kind: int(rows[kind]) for kind in KINDS}


def seed(client: httpx.Client) -> tuple[str, str]:
    """A kept conversation of two turns, a deleted one of one turn, and a direct workflow run of three
    nodes; the conversations' ids."""
    kept = chat(client, "Keep this quasar talk.")["conversation_id"]
    chat(client, "And this one.", kept)
    gone = chat(client, "Forget this nebula talk.")["conversation_id"]
    assert client.delete(f"/api/conversations/{gone}").status_code == 204
    workflow = client.post("/api/workflows", json={"name": "greet", "graph": SIMPLE}).json()["id"]
    run = client.post(f"/api/workflows/{workflow}/run", json={"inputs": {"city": "Oslo"}, "draft": True})
    assert run.json()["status"] == "succeeded", run.text
    return kept, gone


def test_dry_run_prints_each_kind_then_prune_removes_exactly_that(env: dict[str, str], tmp_path: Path) -> None:
    url = env["MEMAGENT_DATABASE__URL"]
    with serving(env, tmp_path) as (_, client):
        kept, gone = seed(client)
    age_everything(url, days=200)
    steps = count(url, T)
    kept_steps = count(url, T, T.message_id.in_(select(M.id).where(M.conversation_id == kept)))

    dry = memagent(["prune", "--dry-run"], env)
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.startswith("would remove\n")
    assert "event_logs\texpire 3600 s after their turn" in dry.stdout
    would = printed(dry.stdout)
    assert would == {"deleted_conversations": 1, "conversation_messages": 1, "conversation_steps": steps - kept_steps,
                     "conversation_workflow_runs": 0, "conversation_node_runs": 0, "steps": kept_steps,
                     "prompt_snapshots": 2, "model_calls": 0, "workflow_runs": 1, "node_runs": 3}
    assert (count(url, T), count(url, W), count(url, NodeRunRow)) == (steps, 1, 3)  # nothing removed

    done = memagent(["prune"], env)
    assert done.returncode == 0, done.stderr
    assert printed(done.stdout) == would
    assert count(url, T) == 0
    assert count(url, C, C.id == gone) == 0
    assert (count(url, W), count(url, NodeRunRow)) == (0, 0)
    assert printed(memagent(["prune", "--dry-run"], env).stdout) == dict.fromkeys(KINDS, 0)

    with serving(env, tmp_path) as (_, client):
        listed = client.get("/api/conversations").json()["data"]
        assert [(c["id"], c["message_count"]) for c in listed] == [(kept, 2)]
        assert client.get("/api/conversations", params={"q": "nebula"}).json()["data"] == []
        messages = client.get(f"/api/conversations/{kept}/messages").json()["data"]
        assert [m["answer"] != "" for m in messages] == [True, True]
        assert client.get(f"/api/messages/{messages[0]['id']}/thoughts").json()["data"] == []
        assert client.get(f"/api/conversations/{gone}").status_code == 404
        chat(client, "A turn after the prune.", kept)


def test_serve_prunes_on_its_schedule_and_stops_cleanly(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path / "memagent.db")
    env = {"MEMAGENT_DATABASE__URL": url, "MEMAGENT_RETENTION__INTERVAL": "0"}
    with serving(env, tmp_path) as (_, client):
        seed(client)
    age_everything(url, days=200)
    assert count(url, T) > 0

    with serving(env | {"MEMAGENT_RETENTION__INTERVAL": "0.5"}, tmp_path) as (service, _):
        deadline = time.monotonic() + 20
        while count(url, T) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert count(url, T) == 0
        assert count(url, C, C.deleted_at.is_not(None)) == 0
    assert service.process.returncode == 0, service.log()
    assert "Traceback" not in service.log()
