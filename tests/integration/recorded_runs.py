"""Workflow runs written by the real run store, as a run writes them (started, then finished with its
node runs), for the suites that remove them: retention and forgetting an end user."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import TYPE_CHECKING

from sqlalchemy import func, select

from domain.ids import ThoughtId
from domain.workflows.graph import NodeType
from domain.workflows.runs import NodeRun, NodeStatus, RunStatus, WorkflowRun
from infrastructure.persistence.sqlalchemy_workflow_run_store import SqlAlchemyWorkflowRunStore
from infrastructure.persistence.workflow_run_rows import NodeRunRow, WorkflowRunRow
from tests.integration.memory_record_fixtures import ALICE, ANN

if TYPE_CHECKING:
    from datetime import datetime

    from domain.conversations.conversation import Message
    from domain.ids import EndUserId, OwnerId
    from infrastructure.persistence.database import Database


async def recorded_run(database: Database, started: datetime, *, owner: OwnerId = ALICE, end_user: EndUserId = ANN,
                       message: Message | None = None, nodes: int = 2) -> str:
    """A finished run with `nodes` node runs, direct or started by `message`'s tool call; its id."""
    run = WorkflowRun(
        id=uuid.uuid4().hex, owner=owner, end_user=end_user, workflow_id="wf", version=1, inputs={"city": "Oslo"},
        started_at=started, parent_message_id=message.id if message else None,
        parent_step_id=ThoughtId("step") if message else None,
    )
    store = SqlAlchemyWorkflowRunStore(database)
    await store.start(run)
    ended = started + timedelta(seconds=1)
    await store.finish(run.finish(RunStatus.SUCCEEDED, ended, outputs={"text": "ok"}), [
        NodeRun(run.id, f"n{n}", NodeType.TEMPLATE, NodeStatus.SUCCEEDED, started, ended) for n in range(nodes)
    ])
    return run.id


async def runs_left(database: Database) -> dict[str, int]:
    """Each run left, with how many node runs it has left."""
    r, n = WorkflowRunRow, NodeRunRow
    query = select(r.id, func.count(n.seq)).outerjoin(n, n.run_id == r.id).group_by(r.id)
    async with database.transaction("read the runs left") as session:
        return {run_id: int(nodes) for run_id, nodes in await session.execute(query)}


async def node_runs(database: Database) -> int:
    """Node runs in all, orphans included (on a backend that enforced no foreign key)."""
    async with database.transaction("count the node runs") as session:
        return int(await session.scalar(select(func.count()).select_from(NodeRunRow)) or 0)
