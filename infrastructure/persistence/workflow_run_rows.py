"""Rows of workflow runs: one per run, and one per node's run in it, in the order they ran.

A run names its workflow without a foreign key: a workflow is archived, never deleted, and its runs
are a record of what ran (as the model-call ledger is); node runs are deleted with their run.
Inputs, outputs and a node's resolved inputs are JSON text: what a tool or a model gave may hold any
character, and PostgreSQL's JSONB refuses some (`\\u0000`) that JSON text keeps escaped. A node
run's `seq` is the order it was recorded in, which is the order its run reads it back in.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from sqlalchemy import Double, ForeignKey, Index, Integer, String, Text, text
from sqlalchemy.orm import Mapped, mapped_column

from application.errors import MalformedRecord
from domain.ids import EndUserId, MessageId, OwnerId, ThoughtId
from domain.workflows.graph import NodeType
from domain.workflows.runs import NodeRun, NodeStatus, RunStatus, Spent, WorkflowRun
from infrastructure.persistence.rows import END_USER, ID, OWNER, SEQUENCE, TIMESTAMP, Base, utc

DIRECT = text("parent_message_id IS NULL")  # a run no turn's tool call started


class WorkflowRunRow(Base):
    __tablename__ = "workflow_runs"
    __table_args__ = (
        Index("ix_workflow_runs_owner_started", "owner", "end_user", "started_at"),  # an account's runs
        Index("ix_workflow_runs_workflow_started", "workflow_id", "started_at"),  # a workflow's runs
        Index("ix_workflow_runs_parent_message", "parent_message_id"),  # the runs a turn's tools started
        # Retention: direct runs, the oldest start first (only those are in it; migration 0015).
        Index("ix_workflow_runs_direct_started", "started_at", postgresql_where=DIRECT, sqlite_where=DIRECT),
    )

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    owner: Mapped[str] = mapped_column(OWNER)
    end_user: Mapped[str] = mapped_column(END_USER)
    workflow_id: Mapped[str] = mapped_column(ID)
    version: Mapped[int | None] = mapped_column(Integer)  # None: the draft ran
    inputs: Mapped[str] = mapped_column(Text)
    outputs: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(16))
    error: Mapped[str | None] = mapped_column(Text)
    tokens: Mapped[int] = mapped_column(Integer)
    price: Mapped[float] = mapped_column(Double)
    latency: Mapped[float] = mapped_column(Double)
    started_at: Mapped[datetime] = mapped_column(TIMESTAMP)
    finished_at: Mapped[datetime | None] = mapped_column(TIMESTAMP)
    parent_message_id: Mapped[str | None] = mapped_column(ID)
    parent_step_id: Mapped[str | None] = mapped_column(ID)
    depth: Mapped[int] = mapped_column(Integer)


class NodeRunRow(Base):
    __tablename__ = "node_runs"
    __table_args__ = (Index("ix_node_runs_run_seq", "run_id", "seq"),)

    seq: Mapped[int] = mapped_column(SEQUENCE, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(ID, ForeignKey("workflow_runs.id", ondelete="CASCADE"))
    node_id: Mapped[str] = mapped_column(String(64))
    node_type: Mapped[str] = mapped_column(String(16))
    status: Mapped[str] = mapped_column(String(16))
    inputs: Mapped[str] = mapped_column(Text)
    outputs: Mapped[str] = mapped_column(Text)
    error: Mapped[str | None] = mapped_column(Text)
    attempt: Mapped[int] = mapped_column(Integer)
    tokens: Mapped[int] = mapped_column(Integer)
    price: Mapped[float] = mapped_column(Double)
    latency: Mapped[float] = mapped_column(Double)
    started_at: Mapped[datetime] = mapped_column(TIMESTAMP)
    finished_at: Mapped[datetime] = mapped_column(TIMESTAMP)


def _text(value: Any) -> str:
    # `default=str`: a value a template made that JSON has no type for is kept as its text.
    return json.dumps(value, ensure_ascii=False, default=str)


def _json(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as error:
        raise MalformedRecord(f"A stored {what} is not JSON: {error}.") from error


def run_values(run: WorkflowRun) -> dict[str, Any]:
    """The columns of a run, as it starts or as it ended."""
    return {
        "id": run.id, "owner": run.owner, "end_user": run.end_user, "workflow_id": run.workflow_id,
        "version": run.version, "inputs": _text(dict(run.inputs)), "outputs": _text(dict(run.outputs)),
        "status": run.status.value, "error": run.error, "tokens": run.spent.tokens, "price": run.spent.price,
        "latency": run.latency, "started_at": utc(run.started_at),
        "finished_at": utc(run.finished_at) if run.finished_at else None,
        "parent_message_id": run.parent_message_id, "parent_step_id": run.parent_step_id, "depth": run.depth,
    }


def node_values(node: NodeRun) -> dict[str, Any]:
    return {
        "run_id": node.run_id, "node_id": node.node_id, "node_type": node.node_type.value,
        "status": node.status.value, "inputs": _text(dict(node.inputs)), "outputs": _text(dict(node.outputs)),
        "error": node.error, "attempt": node.attempt, "tokens": node.spent.tokens, "price": node.spent.price,
        "latency": node.latency, "started_at": utc(node.started_at), "finished_at": utc(node.finished_at),
    }


def run_to_domain(row: WorkflowRunRow) -> WorkflowRun:
    return WorkflowRun(
        id=row.id, owner=OwnerId(row.owner), end_user=EndUserId(row.end_user), workflow_id=row.workflow_id,
        version=row.version, inputs=_json(row.inputs, "run's inputs"), started_at=utc(row.started_at),
        status=RunStatus(row.status), outputs=_json(row.outputs, "run's outputs"), error=row.error,
        spent=Spent(row.tokens, row.price), latency=row.latency,
        finished_at=utc(row.finished_at) if row.finished_at else None,
        parent_message_id=MessageId(row.parent_message_id) if row.parent_message_id else None,
        parent_step_id=ThoughtId(row.parent_step_id) if row.parent_step_id else None, depth=row.depth,
    )


def node_to_domain(row: NodeRunRow) -> NodeRun:
    return NodeRun(
        run_id=row.run_id, node_id=row.node_id, node_type=NodeType(row.node_type), status=NodeStatus(row.status),
        started_at=utc(row.started_at), finished_at=utc(row.finished_at), inputs=_json(row.inputs, "node's inputs"),
        outputs=_json(row.outputs, "node's outputs"), error=row.error, attempt=row.attempt,
        spent=Spent(row.tokens, row.price), latency=row.latency,
    )
