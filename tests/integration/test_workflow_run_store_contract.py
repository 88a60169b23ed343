"""The WorkflowRunStore contract, proven identically on SQLite, on PostgreSQL, and on the fake the
unit tests use; and the migrated `workflow_runs`/`node_runs` tables match the rows.

Owners and ids are fresh per test; the run tables are emptied afterwards on the shared PostgreSQL.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta, timezone

import pytest
from sqlalchemy import text

from application.errors import Conflict
from application.ports.workflow_runs import WorkflowRunStore
from domain.ids import EndUserId, MessageId, OwnerId, ThoughtId
from domain.workflows.graph import NodeType
from domain.workflows.runs import NodeRun, NodeStatus, RunStatus, Spent, WorkflowRun
from infrastructure.persistence.database import Database
from infrastructure.persistence.sqlalchemy_workflow_run_store import SqlAlchemyWorkflowRunStore
from tests.fake_workflows import FakeWorkflowRunStore
from tests.integration.db_fixtures import (  # noqa: F401  (fixtures are used by name)
    migrated_url,
    pg_database_url,
    url_or_fake,
)

pytestmark = pytest.mark.integration

PARIS = timezone(timedelta(hours=2))
T0 = datetime(2026, 3, 1, 9, 30, 15, 123456, tzinfo=PARIS)


def new_run(owner: OwnerId | None = None, end_user: str = "u1", **fields: object) -> WorkflowRun:
    values: dict[str, object] = {
        "id": f"run-{uuid.uuid4().hex}", "owner": owner or OwnerId(f"owner-{uuid.uuid4().hex}"),
        "end_user": EndUserId(end_user), "workflow_id": "wf-1", "version": 3,
        "inputs": {"city": "Zürich ✓", "days": 2, "nested": {"list": [1, None, True]}}, "started_at": T0,
    }
    return WorkflowRun(**{**values, **fields})  # type: ignore[arg-type]


def node_run(run: WorkflowRun, node_id: str, at: float, status: NodeStatus = NodeStatus.SUCCEEDED,
             **fields: object) -> NodeRun:
    start = T0 + timedelta(seconds=at)
    values: dict[str, object] = {"inputs": {"prompt": "hi \u0000 你好"}, "outputs": {"text": "ok"}, "attempt": 2,
                                 "spent": Spent(42, 0.0042), "latency": 0.25}
    if status is NodeStatus.SKIPPED:
        values = {"attempt": 0}
    return NodeRun(run.id, node_id, NodeType.LLM, status, start, start + timedelta(seconds=0.25),
                   **{**values, **fields})  # type: ignore[arg-type]


@pytest.fixture
async def store(url_or_fake: str | None) -> AsyncIterator[WorkflowRunStore]:  # noqa: F811
    if url_or_fake is None:
        yield FakeWorkflowRunStore()
        return
    database = Database(url_or_fake)
    await database.start()
    try:
        yield SqlAlchemyWorkflowRunStore(database)
    finally:
        if not database.is_sqlite:
            async with database.engine.begin() as connection:
                await connection.execute(text("TRUNCATE node_runs, workflow_runs"))
        await database.dispose()


async def test_a_started_run_reads_back_running_with_no_node(store: WorkflowRunStore) -> None:
    run = new_run(parent_message_id=MessageId("m1"), parent_step_id=ThoughtId("s1"), depth=2, version=None)
    await store.start(run)
    recorded = await store.get(run.id, run.owner)
    assert recorded is not None
    assert recorded.run == run
    assert recorded.run.started_at.tzinfo == UTC
    assert recorded.nodes == ()


async def test_a_finished_run_reads_back_with_its_nodes_in_the_order_they_were_recorded(
        store: WorkflowRunStore) -> None:
    run = new_run()
    await store.start(run)
    nodes = [node_run(run, "start", 0), node_run(run, "b", 1), node_run(run, "a", 1),
             node_run(run, "skip", 2, NodeStatus.SKIPPED),
             node_run(run, "late", 3, NodeStatus.STOPPED, error="the run ended while the node was running")]
    ended = run.finish(RunStatus.SUCCEEDED, T0 + timedelta(seconds=4), outputs={"out": ["x", 1]},
                       spent=Spent(84, 0.0084))
    await store.finish(ended, nodes)
    recorded = await store.get(run.id, run.owner, EndUserId("u1"))
    assert recorded is not None
    assert recorded.run == ended
    assert list(recorded.nodes) == nodes
    assert recorded.nodes[0].inputs["prompt"] == "hi \u0000 你好"


async def test_a_run_finishes_once(store: WorkflowRunStore) -> None:
    run = new_run()
    await store.start(run)
    await store.finish(run.finish(RunStatus.FAILED, T0, error="node x failed"), [])
    with pytest.raises(Conflict):
        await store.finish(run.finish(RunStatus.STOPPED, T0, error="stopped"), [node_run(run, "x", 0)])
    recorded = await store.get(run.id, run.owner)
    assert recorded is not None
    assert (recorded.run.status, recorded.nodes) == (RunStatus.FAILED, ())


async def test_a_run_is_found_only_by_its_owner_and_its_end_user(store: WorkflowRunStore) -> None:
    run = new_run(end_user="u1")
    await store.start(run)
    assert await store.get(run.id, run.owner) is not None  # the whole account
    assert await store.get(run.id, run.owner, EndUserId("u1")) is not None
    assert await store.get(run.id, run.owner, EndUserId("u2")) is None
    assert await store.get(run.id, OwnerId("someone-else")) is None
    assert await store.get("no-such-run", run.owner) is None


async def test_the_migrated_run_tables_match_the_rows(migrated_url: str) -> None:  # noqa: F811
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext

    from infrastructure.persistence.rows import Base

    db = Database(migrated_url)
    try:
        await db.check_migrated()
        async with db.engine.connect() as connection:
            diffs = await connection.run_sync(
                lambda sync: compare_metadata(MigrationContext.configure(sync), Base.metadata)
            )
    finally:
        await db.dispose()
    assert [d for d in diffs if "workflow_runs" in str(d) or "node_runs" in str(d)] == []
