"""Prune of workflow runs on SQLite and PostgreSQL (the PostgreSQL cases with Redis as the memory
cache and event log), the runs written by the real run store as the service writes them: direct runs
past their age go with their node runs in bounded batches, younger ones and a turn's stay; a deleted
conversation takes the runs its messages called before its messages; a dry run counts exactly what
the prune then removes and removes nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from domain.retention import PruneCounts, PruneKind, RetentionPolicy
from infrastructure.persistence.sqlalchemy_workflow_run_store import SqlAlchemyWorkflowRunStore
from tests.integration.memory_record_fixtures import (  # noqa: F401  (fixtures by name)
    ALICE,
    ANN,
    memory_db,
    memory_pg_url,
    memory_url,
)
from tests.integration.pruning_backends import (  # noqa: F401  (fixtures by name)
    DAY,
    NOW,
    Backends,
    backends,
    redis_or_none,
)
from tests.integration.recorded_runs import node_runs, recorded_run, runs_left
from tests.integration.redis_fixtures import redis_client  # noqa: F401  (a fixture by name)

if TYPE_CHECKING:
    from datetime import datetime

pytestmark = pytest.mark.integration

RUNS_ONLY = RetentionPolicy(None, None, None, None, workflow_runs=60 * DAY)
CONVERSATIONS_ONLY = RetentionPolicy(None, None, 30 * DAY, None)


def days_ago(days: float) -> datetime:
    return NOW - days * DAY


async def test_direct_runs_past_their_age_go_with_their_node_runs_in_bounded_batches(
    backends: Backends,  # noqa: F811
) -> None:
    b = backends
    turn = b.world.turns[(await b.world.conversation()).id][0]
    old = await recorded_run(b.db, days_ago(61))
    await recorded_run(b.db, days_ago(90), nodes=3)
    young = await recorded_run(b.db, days_ago(59))
    called = await recorded_run(b.db, days_ago(90), message=turn)  # a turn's: it stays while its message does

    report = await b.prune(RUNS_ONLY, size=2)()

    assert report.counts == PruneCounts(workflow_runs=2, node_runs=5)
    batches = [(batch.kind, batch.rows) for batch in report.batches]
    # Node runs two at a time, the older run's first, each run going in the batch after its last node run's.
    assert batches == [(PruneKind.WORKFLOW_RUNS, rows) for rows in (2, 2, 1, 1, 1)]
    assert await runs_left(b.db) == {young: 2, called: 2}
    assert await node_runs(b.db) == 4
    store = SqlAlchemyWorkflowRunStore(b.db)
    assert await store.get(old, ALICE) is None
    kept = await store.get(young, ALICE, ANN)
    assert kept is not None
    assert [node.node_id for node in kept.nodes] == ["n0", "n1"]
    assert (await b.prune(RUNS_ONLY)()).counts == PruneCounts()


async def test_a_deleted_conversation_takes_the_runs_its_messages_called_and_leaves_the_rest(
    backends: Backends,  # noqa: F811
) -> None:
    b = backends
    gone, live = await b.world.conversation(), await b.world.conversation()
    first, second = b.world.turns[gone.id][0], await b.world.turn(gone, "again", 5)
    for message, nodes in ((first, 3), (second, 2)):
        await recorded_run(b.db, days_ago(1), message=message, nodes=nodes)  # however young
    live_turn = await recorded_run(b.db, days_ago(1), message=b.world.turns[live.id][0])
    direct = await recorded_run(b.db, days_ago(200))  # direct runs are kept for good here
    await b.world.delete(gone)

    report = await b.prune(CONVERSATIONS_ONLY, size=2)()

    assert report.counts == PruneCounts(deleted_conversations=1, conversation_messages=2,
                                        conversation_workflow_runs=2, conversation_node_runs=5)
    assert all(batch.rows <= 2 for batch in report.batches)
    assert await runs_left(b.db) == {live_turn: 2, direct: 2}
    assert await node_runs(b.db) == 4
    assert await b.world.store.get_message(first.id, ALICE) is None


async def test_a_dry_run_counts_the_runs_the_prune_then_removes_and_removes_nothing(
    backends: Backends,  # noqa: F811
) -> None:
    b = backends
    gone = await b.world.conversation()
    called = await recorded_run(b.db, days_ago(1), message=b.world.turns[gone.id][0], nodes=1)
    await b.world.delete(gone)
    direct = await recorded_run(b.db, days_ago(61), nodes=3)
    young = await recorded_run(b.db, days_ago(5))
    policy = RetentionPolicy(None, None, 30 * DAY, None, workflow_runs=60 * DAY)

    dry = await b.prune(policy)(dry_run=True)
    assert dry.dry_run
    assert await runs_left(b.db) == {called: 1, direct: 3, young: 2}

    done = await b.prune(policy)()
    assert done.counts == dry.counts == PruneCounts(
        deleted_conversations=1, conversation_messages=1, conversation_workflow_runs=1, conversation_node_runs=1,
        workflow_runs=1, node_runs=3,
    )
    assert await runs_left(b.db) == {young: 2}
    assert (await b.prune(policy)(dry_run=True)).counts == PruneCounts()
