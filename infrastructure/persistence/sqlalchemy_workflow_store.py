"""WorkflowStore on SQLAlchemy 2 async: the `workflows` and `workflow_versions` tables, SQLite or PostgreSQL.

A save and a publish are compare-and-set: one conditional UPDATE whose WHERE names what the caller
read (the draft revision, the latest version) and that the workflow is not archived; its row count
decides. On PostgreSQL a second writer waits on the row lock, then re-reads the row and finds the
guard moved; SQLite has one writer at a time. A publish inserts the version in the transaction of
its UPDATE, so a version exists exactly when the workflow points at it, and two publishes never
take one number.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy import Table, bindparam, insert, select, update
from sqlalchemy.exc import IntegrityError

from application.errors import Conflict
from application.ports.workflow_store import WorkflowStore
from infrastructure.persistence.workflow_rows import (
    WorkflowRow,
    WorkflowVersionRow,
    version_to_domain,
    version_values,
    workflow_saved_values,
    workflow_to_domain,
    workflow_values,
)

if TYPE_CHECKING:
    from sqlalchemy.engine import Result

    from domain.ids import OwnerId
    from domain.workflows.workflow import Workflow, WorkflowId, WorkflowVersion
    from infrastructure.persistence.database import Database


def _table(row: type[WorkflowRow | WorkflowVersionRow]) -> Table:
    table = row.__table__
    if not isinstance(table, Table):
        raise TypeError(f"{row.__name__} is not mapped to a table")
    return table


WORKFLOWS = _table(WorkflowRow)
VERSIONS = _table(WorkflowVersionRow)
# Not `owner`: a bound parameter may not share its column's name in an UPDATE.
_MINE = (WORKFLOWS.c.id == bindparam("workflow_id"), WORKFLOWS.c.owner == bindparam("owned_by"))
_SAVED = ("graph", "revision", "archived", "updated_at")

INSERT_WORKFLOW = insert(WORKFLOWS)
INSERT_VERSION = insert(VERSIONS)
GET_WORKFLOW = select(WorkflowRow).where(*_MINE)
# Newest first along ix_workflows_owner_created; the id breaks ties between equal times.
LIST_WORKFLOWS = (
    select(WorkflowRow).where(WORKFLOWS.c.owner == bindparam("owner"))
    .order_by(WORKFLOWS.c.created_at.desc(), WORKFLOWS.c.id.desc())
)
# A bound parameter may not share its column's name in a SET clause: new values are `new_<column>`.
SAVE = (
    update(WORKFLOWS)
    .where(*_MINE, WORKFLOWS.c.revision == bindparam("expected_revision"), WORKFLOWS.c.archived.is_(False))
    .values({column: bindparam(f"new_{column}") for column in _SAVED})
)
POINT_AT_VERSION = (
    update(WORKFLOWS)
    .where(*_MINE, WORKFLOWS.c.latest_version == bindparam("expected_latest"), WORKFLOWS.c.archived.is_(False))
    .values(latest_version=bindparam("new_latest_version"), updated_at=bindparam("new_updated_at"))
)
_VERSIONS_OF = (VERSIONS.c.workflow_id == bindparam("workflow_id"), VERSIONS.c.owner == bindparam("owned_by"))
GET_VERSION = select(WorkflowVersionRow).where(*_VERSIONS_OF, VERSIONS.c.number == bindparam("number"))
LIST_VERSIONS = select(WorkflowVersionRow).where(*_VERSIONS_OF).order_by(VERSIONS.c.number.desc())


class SqlAlchemyWorkflowStore(WorkflowStore):
    """Each method is one transaction; every database failure surfaces as `StoreUnavailable`."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def create(self, workflow: Workflow) -> None:
        async with self._db.transaction("create_workflow") as session:
            try:
                await session.execute(INSERT_WORKFLOW, workflow_values(workflow))
            except IntegrityError:  # the name among the owner's (ids are new): the transaction rolls back
                raise Conflict(f"You have a workflow named {workflow.name!r} already; archive it or pick "
                               "another name.") from None

    async def get(self, workflow_id: WorkflowId, owner: OwnerId) -> Workflow | None:
        async with self._db.transaction("get_workflow") as session:
            row = await session.scalar(GET_WORKFLOW, {"workflow_id": workflow_id, "owned_by": owner})
        return workflow_to_domain(row) if row is not None else None

    async def list_owned(self, owner: OwnerId) -> list[Workflow]:
        async with self._db.transaction("list_workflows") as session:
            rows = (await session.scalars(LIST_WORKFLOWS, {"owner": owner})).all()
        return [workflow_to_domain(row) for row in rows]

    async def save(self, workflow: Workflow, expected_revision: int) -> bool:
        values = {"workflow_id": workflow.id, "owned_by": workflow.owner, "expected_revision": expected_revision,
                  **{f"new_{column}": value for column, value in workflow_saved_values(workflow).items()}}
        async with self._db.transaction("save_workflow") as session:
            saved = await session.execute(SAVE, values)
        return _one_row(saved)

    async def publish(self, workflow: Workflow, version: WorkflowVersion) -> bool:
        moving = {"workflow_id": workflow.id, "owned_by": workflow.owner, "expected_latest": version.number - 1,
                  "new_latest_version": version.number,
                  "new_updated_at": workflow_saved_values(workflow)["updated_at"]}
        async with self._db.transaction("publish_workflow") as session:
            if not _one_row(await session.execute(POINT_AT_VERSION, moving)):
                return False
            await session.execute(INSERT_VERSION, version_values(version, workflow.owner))
        return True

    async def version(self, workflow_id: WorkflowId, owner: OwnerId, number: int) -> WorkflowVersion | None:
        async with self._db.transaction("get_workflow_version") as session:
            row = await session.scalar(GET_VERSION, {"workflow_id": workflow_id, "owned_by": owner, "number": number})
        return version_to_domain(row) if row is not None else None

    async def versions(self, workflow_id: WorkflowId, owner: OwnerId) -> list[WorkflowVersion]:
        async with self._db.transaction("list_workflow_versions") as session:
            rows = (await session.scalars(LIST_VERSIONS, {"workflow_id": workflow_id, "owned_by": owner})).all()
        return [version_to_domain(row) for row in rows]


def _one_row(result: Result[object]) -> bool:
    return result.rowcount == 1  # type: ignore[attr-defined, no-any-return]
