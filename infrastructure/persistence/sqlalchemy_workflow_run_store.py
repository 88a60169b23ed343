"""The record of workflow runs in SQL (`workflow_runs`, `node_runs`, migration 0014), on SQLite and
PostgreSQL.

A run is one INSERT as it starts; its end is one transaction that updates it (only while it is still
`running`: a run finishes once) and inserts its node runs in one multi-row INSERT, in the order they
ran. A run is read back with its nodes in two indexed statements, scoped to its owner and end user.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy import insert, select, update

from application.errors import Conflict
from application.ports.workflow_runs import RecordedRun, WorkflowRunStore
from domain.workflows.runs import RunStatus
from infrastructure.persistence.workflow_run_rows import (
    NodeRunRow,
    WorkflowRunRow,
    node_to_domain,
    node_values,
    run_to_domain,
    run_values,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from domain.ids import EndUserId, OwnerId
    from domain.workflows.runs import NodeRun, WorkflowRun
    from infrastructure.persistence.database import Database

_ENDED = ("outputs", "status", "error", "tokens", "price", "latency", "finished_at")


class SqlAlchemyWorkflowRunStore(WorkflowRunStore):
    def __init__(self, database: Database) -> None:
        self._db = database

    async def start(self, run: WorkflowRun) -> None:
        async with self._db.transaction("start_workflow_run") as session:
            await session.execute(insert(WorkflowRunRow), [run_values(run)])

    async def finish(self, run: WorkflowRun, nodes: Sequence[NodeRun]) -> None:
        values = run_values(run)
        r = WorkflowRunRow
        async with self._db.transaction("finish_workflow_run") as session:
            ended = await session.execute(
                update(r).where(r.id == run.id, r.status == RunStatus.RUNNING.value)
                .values({name: values[name] for name in _ENDED})
            )
            if ended.rowcount != 1:  # type: ignore[attr-defined]
                raise Conflict(f"The workflow run {run.id} is not running: it cannot finish again.")
            if nodes:
                await session.execute(insert(NodeRunRow), [node_values(n) for n in nodes])

    async def get(self, run_id: str, owner: OwnerId, end_user: EndUserId | None = None) -> RecordedRun | None:
        r = WorkflowRunRow
        statement = select(r).where(r.id == run_id, r.owner == owner)
        if end_user is not None:
            statement = statement.where(r.end_user == end_user)
        nodes = select(NodeRunRow).where(NodeRunRow.run_id == run_id).order_by(NodeRunRow.seq)
        async with self._db.transaction("get_workflow_run") as session:
            row = (await session.execute(statement)).scalar_one_or_none()
            if row is None:
                return None
            node_rows = (await session.execute(nodes)).scalars().all()
        return RecordedRun(run_to_domain(row), tuple(node_to_domain(n) for n in node_rows))
