"""The WorkflowStore contract, proven identically on SQLite, on PostgreSQL, and on the fake the
unit tests use.

Owners and ids are fresh per test; the workflow tables are emptied afterwards on the shared PostgreSQL.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone

import pytest
from sqlalchemy import text

from application.errors import Conflict
from application.ports.workflow_store import WorkflowStore
from domain.ids import OwnerId
from domain.workflows.workflow import Workflow, WorkflowId
from infrastructure.persistence.database import Database
from infrastructure.persistence.sqlalchemy_workflow_store import SqlAlchemyWorkflowStore
from tests.fake_workflow_store import FakeWorkflowStore
from tests.integration.db_fixtures import (  # noqa: F401  (fixtures are used by name)
    pg_database_url,
    url_or_fake,
)
from tests.workflow_graphs import simple

pytestmark = pytest.mark.integration

T0 = datetime(2026, 1, 1, tzinfo=UTC)
RACERS = 12


def _owner() -> OwnerId:
    return OwnerId(f"owner-{uuid.uuid4().hex}")


def new_workflow(owner: OwnerId | None = None, at: datetime = T0, name: str = "trip_plan") -> Workflow:
    return Workflow(WorkflowId(f"wf-{uuid.uuid4().hex}"), owner or _owner(), name, "Plans a trip. ✓", simple(),
                    1, 0, False, at, at)


@pytest.fixture
async def store(url_or_fake: str | None) -> AsyncIterator[WorkflowStore]:  # noqa: F811
    if url_or_fake is None:
        yield FakeWorkflowStore()
        return
    database = Database(url_or_fake)
    await database.start()
    try:
        yield SqlAlchemyWorkflowStore(database)
    finally:
        if not database.is_sqlite:
            async with database.engine.begin() as connection:
                await connection.execute(text("TRUNCATE workflow_versions, workflows"))
        await database.dispose()


async def test_a_workflow_round_trips_its_graph_as_sent_and_its_times_as_utc(store: WorkflowStore) -> None:
    at = datetime(2026, 3, 1, 9, 30, 15, 123456, timezone(timedelta(hours=1)))
    graph = simple()
    graph["nodes"][1]["template"] = "Bonjour {{ start.city }} ✓ 你好"
    workflow = replace(new_workflow(at=at), graph=graph)
    await store.create(workflow)

    loaded = await store.get(workflow.id, workflow.owner)

    assert loaded == workflow
    if isinstance(store, SqlAlchemyWorkflowStore):  # the fake keeps the object it was given
        assert loaded is not None
        assert loaded.created_at.tzinfo == UTC


async def test_another_owner_finds_nothing(store: WorkflowStore) -> None:
    workflow = new_workflow()
    await store.create(workflow)
    _, version = workflow.published("", {}, None, T0)
    assert await store.publish(workflow, version)
    mallory = _owner()

    assert await store.get(workflow.id, mallory) is None
    assert await store.list_owned(mallory) == []
    assert await store.version(workflow.id, mallory, 1) is None
    assert await store.versions(workflow.id, mallory) == []
    assert not await store.save(replace(workflow, owner=mallory, revision=2), expected_revision=1)
    assert (await store.get(workflow.id, workflow.owner)) == replace(workflow, latest_version=1)


async def test_a_name_is_unique_among_the_owners_workflows_that_are_not_archived(store: WorkflowStore) -> None:
    alice = _owner()
    first = new_workflow(alice)
    await store.create(first)
    await store.create(new_workflow(_owner()))  # another account's of the same name

    with pytest.raises(Conflict, match="named 'trip_plan' already"):
        await store.create(new_workflow(alice))
    assert await store.save(first.archived_at(T0), expected_revision=1)
    await store.create(new_workflow(alice, T0 + timedelta(1)))  # the archived one freed its name

    assert [w.archived for w in await store.list_owned(alice)] == [False, True]


async def test_list_gives_the_owners_workflows_newest_first(store: WorkflowStore) -> None:
    alice = _owner()
    made = [new_workflow(alice, T0 + timedelta(hours=h), name=f"w{h}") for h in (1, 0, 2)]
    for workflow in made:
        await store.create(workflow)

    assert [w.name for w in await store.list_owned(alice)] == ["w2", "w1", "w0"]


async def test_a_save_is_compare_and_set_on_the_revision_and_refused_once_archived(store: WorkflowStore) -> None:
    workflow = new_workflow()
    await store.create(workflow)
    saved = workflow.saved_draft(1, simple(edges=[]), T0 + timedelta(1))

    assert await store.save(saved, expected_revision=1)
    assert not await store.save(workflow.saved_draft(1, simple(), T0), expected_revision=1)  # stale
    assert await store.get(workflow.id, workflow.owner) == saved
    assert await store.save(saved.archived_at(T0), expected_revision=2)
    assert not await store.save(saved.saved_draft(2, simple(), T0), expected_revision=2)


async def test_concurrent_saves_over_one_revision_let_exactly_one_through(store: WorkflowStore) -> None:
    workflow = new_workflow()
    await store.create(workflow)
    racers = [workflow.saved_draft(1, simple(edges=[{"n": n}]), T0) for n in range(RACERS)]

    won = await asyncio.gather(*(store.save(w, expected_revision=1) for w in racers))

    assert won.count(True) == 1
    stored = await store.get(workflow.id, workflow.owner)
    assert stored is not None
    assert stored.graph == racers[won.index(True)].graph


async def test_publishing_numbers_versions_without_gaps_or_twins_and_keeps_them(store: WorkflowStore) -> None:
    workflow = new_workflow()
    await store.create(workflow)
    published, v1 = workflow.published("first", {"type": "object"}, None, T0 + timedelta(1))
    racers = [workflow.published(f"racer {n}", {}, None, T0) for n in range(RACERS)]

    won = await asyncio.gather(*(store.publish(w, v) for w, v in racers))
    assert won.count(True) == 1
    assert not await store.publish(published, v1)  # number 1 is taken
    winner = racers[won.index(True)][1]

    changed = replace(published, latest_version=1).saved_draft(1, simple(edges=[]), T0)
    assert await store.save(changed, expected_revision=1)
    second, v2 = changed.published("second", {"type": "object"}, winner, T0 + timedelta(2))
    assert await store.publish(second, v2)

    assert [v.number for v in await store.versions(workflow.id, workflow.owner)] == [2, 1]
    assert await store.version(workflow.id, workflow.owner, 1) == winner
    assert await store.version(workflow.id, workflow.owner, 2) == v2
    assert await store.version(workflow.id, workflow.owner, 3) is None
    stored = await store.get(workflow.id, workflow.owner)
    assert stored is not None
    assert stored.latest_version == 2


async def test_an_archived_workflow_takes_no_new_version(store: WorkflowStore) -> None:
    workflow = new_workflow()
    await store.create(workflow)
    assert await store.save(workflow.archived_at(T0), expected_revision=1)

    _, version = workflow.published("late", {}, None, T0)

    assert not await store.publish(workflow, version)
    assert await store.versions(workflow.id, workflow.owner) == []
