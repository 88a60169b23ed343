"""AgentStore on SQLAlchemy 2 async: the `agents` and `agent_versions` tables, SQLite or PostgreSQL.

A draft save and a publish are compare-and-set: one conditional UPDATE whose WHERE names the
value the caller read (the draft revision, the latest version), and its row count decides. On
PostgreSQL a second writer waits on the row lock, then re-reads the row and finds the guard moved;
SQLite has one writer at a time. A publish inserts the version in the transaction of its UPDATE,
so a version exists exactly when the agent points at it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy import Table, bindparam, insert, select, update
from sqlalchemy.exc import IntegrityError

from application.errors import Conflict
from application.ports.agent_store import AgentStore
from infrastructure.persistence.agent_rows import (
    AgentRow,
    AgentVersionRow,
    agent_draft_values,
    agent_header_values,
    agent_to_domain,
    agent_values,
    version_to_domain,
    version_values,
)
from infrastructure.persistence.rows import utc

if TYPE_CHECKING:
    from sqlalchemy.engine import Result
    from sqlalchemy.ext.asyncio import AsyncSession

    from domain.agents.agent import Agent, AgentVersion
    from domain.ids import AppId, OwnerId
    from infrastructure.persistence.database import Database


def _table(row: type[AgentRow | AgentVersionRow]) -> Table:
    table = row.__table__
    if not isinstance(table, Table):
        raise TypeError(f"{row.__name__} is not mapped to a table")
    return table


AGENTS = _table(AgentRow)
VERSIONS = _table(AgentVersionRow)

# Statements built once; a bound parameter may not share its column's name in a SET clause, so
# new values are `new_<column>`.
_HEADER = ("name", "description", "status", "pinned_version", "updated_at")
_DRAFT = ("draft_config", "draft_revision", "draft_updated_at", "updated_at")

INSERT_AGENT = insert(AGENTS)
INSERT_VERSION = insert(VERSIONS)
GET_AGENT = select(AgentRow).where(AGENTS.c.id == bindparam("agent_id"))
# Newest first along ix_agents_owner_created; the id breaks ties between equal times.
LIST_AGENTS = (
    select(AgentRow)
    .where(AGENTS.c.owner == bindparam("owner"))
    .order_by(AGENTS.c.created_at.desc(), AGENTS.c.id.desc())
)
UPDATE_HEADER = (
    update(AGENTS)
    .where(
        AGENTS.c.id == bindparam("agent_id"), AGENTS.c.status == bindparam("was_status"),
        AGENTS.c.pinned_version.is_not_distinct_from(bindparam("was_pinned")),
        AGENTS.c.latest_version == bindparam("was_latest"),
    )
    .values({column: bindparam(f"new_{column}") for column in _HEADER})
)
SAVE_DRAFT = (
    update(AGENTS)
    .where(AGENTS.c.id == bindparam("agent_id"), AGENTS.c.draft_revision == bindparam("expected_revision"))
    .values({column: bindparam(f"new_{column}") for column in _DRAFT})
)
POINT_AT_VERSION = (
    update(AGENTS)
    .where(AGENTS.c.id == bindparam("agent_id"), AGENTS.c.latest_version == bindparam("expected_latest"))
    .values(
        latest_version=bindparam("new_latest_version"), pinned_version=bindparam("new_pinned_version"),
        updated_at=bindparam("new_updated_at"),
    )
)
GET_VERSION = select(AgentVersionRow).where(
    VERSIONS.c.agent_id == bindparam("agent_id"), VERSIONS.c.version == bindparam("version")
)
LIST_VERSIONS = (
    select(AgentVersionRow).where(VERSIONS.c.agent_id == bindparam("agent_id")).order_by(VERSIONS.c.version.desc())
)


class SqlAlchemyAgentStore(AgentStore):
    """Each method is one transaction; every database failure surfaces as `StoreUnavailable`."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def add_agent(self, agent: Agent) -> None:
        async with self._db.transaction("add_agent") as session:
            try:
                await session.execute(INSERT_AGENT, agent_values(agent))
            except IntegrityError:  # the primary key: raised out of the block, the transaction rolls back
                raise Conflict(f"An agent with the id {agent.id!r} already exists.") from None

    async def get_agent(self, agent_id: AppId) -> Agent | None:
        async with self._db.transaction("get_agent") as session:
            row = await session.scalar(GET_AGENT, {"agent_id": agent_id})
        return agent_to_domain(row) if row is not None else None

    async def list_agents(self, owner: OwnerId) -> list[Agent]:
        async with self._db.transaction("list_agents") as session:
            rows = (await session.scalars(LIST_AGENTS, {"owner": owner})).all()
        return [agent_to_domain(row) for row in rows]

    async def update_agent(self, agent: Agent, read: Agent) -> bool:
        values = {
            "agent_id": agent.id, "was_status": read.status.value, "was_pinned": read.pinned_version,
            "was_latest": read.latest_version, **_new(agent_header_values(agent)),
        }
        async with self._db.transaction("update_agent") as session:
            updated = await session.execute(UPDATE_HEADER, values)
        return _one_row(updated)

    async def save_draft(self, agent: Agent, expected_revision: int) -> bool:
        values = {"agent_id": agent.id, "expected_revision": expected_revision, **_new(agent_draft_values(agent))}
        async with self._db.transaction("save_draft") as session:
            saved = await session.execute(SAVE_DRAFT, values)
        return _one_row(saved)

    async def publish(self, agent: Agent, version: AgentVersion) -> bool:
        async with self._db.transaction("publish") as session:
            if not await self._point_at(session, agent, version):
                return False
            await session.execute(INSERT_VERSION, version_values(version))
        return True

    async def _point_at(self, session: AsyncSession, agent: Agent, version: AgentVersion) -> bool:
        """Move the agent to `version` if its latest is still the one before; the row stays locked."""
        moved = await session.execute(
            POINT_AT_VERSION,
            {
                "agent_id": version.agent_id, "expected_latest": version.version - 1,
                "new_latest_version": version.version, "new_pinned_version": agent.pinned_version,
                "new_updated_at": utc(agent.updated_at),
            },
        )
        return _one_row(moved)

    async def get_version(self, agent_id: AppId, version: int) -> AgentVersion | None:
        async with self._db.transaction("get_version") as session:
            row = await session.scalar(GET_VERSION, {"agent_id": agent_id, "version": version})
        return version_to_domain(row) if row is not None else None

    async def list_versions(self, agent_id: AppId) -> list[AgentVersion]:
        async with self._db.transaction("list_versions") as session:
            rows = (await session.scalars(LIST_VERSIONS, {"agent_id": agent_id})).all()
        return [version_to_domain(row) for row in rows]


def _new(values: dict[str, object]) -> dict[str, object]:
    return {f"new_{column}": value for column, value in values.items()}


def _one_row(result: Result[object]) -> bool:
    return result.rowcount == 1  # type: ignore[attr-defined, no-any-return]
