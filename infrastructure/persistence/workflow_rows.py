"""Rows of workflows as data: a workflow with its draft graph, and its immutable published versions.

A graph is stored as JSON text exactly as it was saved (the editor gets back what it sent). A name
is unique among an owner's workflows that are not archived (a partial unique index), so that an
archived workflow frees its name. `workflows.revision` and `workflows.latest_version` are the
compare-and-set guards of a draft save and of a publish; `workflow_versions` is keyed by
(workflow_id, number) and carries its owner, so that a version is read in one indexed lookup.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, ForeignKey, Index, Integer, String, Text, false, text
from sqlalchemy.orm import Mapped, mapped_column

from application.errors import MalformedRecord
from domain.ids import OwnerId
from domain.workflows.workflow import Workflow, WorkflowId, WorkflowVersion
from infrastructure.persistence.rows import ID, OWNER, TIMESTAMP, Base, utc

NOT_ARCHIVED = text("NOT archived")


class WorkflowRow(Base):
    __tablename__ = "workflows"
    __table_args__ = (
        Index("ix_workflows_owner_created", "owner", "created_at"),  # list: an owner's, newest first
        Index("uq_workflows_owner_name", "owner", "name", unique=True, sqlite_where=NOT_ARCHIVED,
              postgresql_where=NOT_ARCHIVED),
    )

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    owner: Mapped[str] = mapped_column(OWNER)
    name: Mapped[str] = mapped_column(String(64))
    description: Mapped[str] = mapped_column(Text)
    graph: Mapped[str] = mapped_column(Text)  # JSON text
    revision: Mapped[int] = mapped_column(Integer)
    latest_version: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    archived: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    created_at: Mapped[datetime] = mapped_column(TIMESTAMP)
    updated_at: Mapped[datetime] = mapped_column(TIMESTAMP)


class WorkflowVersionRow(Base):
    __tablename__ = "workflow_versions"

    workflow_id: Mapped[str] = mapped_column(ID, ForeignKey("workflows.id", ondelete="CASCADE"), primary_key=True)
    number: Mapped[int] = mapped_column(Integer, primary_key=True)
    owner: Mapped[str] = mapped_column(OWNER)
    graph: Mapped[str] = mapped_column(Text)  # JSON text
    note: Mapped[str] = mapped_column(Text)
    tool_schema: Mapped[str] = mapped_column(Text)  # JSON text
    published_at: Mapped[datetime] = mapped_column(TIMESTAMP)


def _text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _json(workflow_id: str, stored: str) -> Any:
    try:
        return json.loads(stored)
    except ValueError as broken:
        raise MalformedRecord(f"The stored graph of workflow {workflow_id!r} cannot be read.") from broken


def workflow_to_domain(row: WorkflowRow) -> Workflow:
    return Workflow(
        id=WorkflowId(row.id), owner=OwnerId(row.owner), name=row.name, description=row.description,
        graph=_json(row.id, row.graph), revision=row.revision, latest_version=row.latest_version,
        archived=row.archived, created_at=utc(row.created_at), updated_at=utc(row.updated_at),
    )


def workflow_saved_values(workflow: Workflow) -> dict[str, Any]:
    """What a save writes: the draft and the archived flag, never the latest version (the publish's guard)."""
    return {"graph": _text(workflow.graph), "revision": workflow.revision, "archived": workflow.archived,
            "updated_at": utc(workflow.updated_at)}


def workflow_values(workflow: Workflow) -> dict[str, Any]:
    return {
        "id": workflow.id, "owner": workflow.owner, "name": workflow.name, "description": workflow.description,
        "latest_version": workflow.latest_version, "created_at": utc(workflow.created_at),
        **workflow_saved_values(workflow),
    }


def version_to_domain(row: WorkflowVersionRow) -> WorkflowVersion:
    return WorkflowVersion(
        workflow_id=WorkflowId(row.workflow_id), number=row.number, graph=_json(row.workflow_id, row.graph),
        note=row.note, tool_schema=_json(row.workflow_id, row.tool_schema), published_at=utc(row.published_at),
    )


def version_values(version: WorkflowVersion, owner: OwnerId) -> dict[str, Any]:
    return {
        "workflow_id": version.workflow_id, "number": version.number, "owner": owner,
        "graph": _text(version.graph), "note": version.note, "tool_schema": _text(version.tool_schema),
        "published_at": utc(version.published_at),
    }
