"""Workflow runs: each run of a workflow, and each node's run in it, in the order they ran.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-20 13:00:00

Written out in full rather than importing the rows, like 0004. A run names its workflow without a
foreign key (a workflow is archived, never deleted; its runs are a record, like the model-call
ledger); a node run is deleted with its run. Inputs and outputs are JSON text (workflow_run_rows.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import sqlalchemy as sa
from alembic import op

if TYPE_CHECKING:
    from collections.abc import Sequence

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ID = sa.String(64)
OWNER = sa.String(255)
END_USER = sa.String(256)
TIMESTAMP = sa.DateTime(timezone=True)
SEQUENCE = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "workflow_runs",
        sa.Column("id", ID, nullable=False),
        sa.Column("owner", OWNER, nullable=False),
        sa.Column("end_user", END_USER, nullable=False),
        sa.Column("workflow_id", ID, nullable=False),
        sa.Column("version", sa.Integer(), nullable=True),
        sa.Column("inputs", sa.Text(), nullable=False),
        sa.Column("outputs", sa.Text(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("tokens", sa.Integer(), nullable=False),
        sa.Column("price", sa.Double(), nullable=False),
        sa.Column("latency", sa.Double(), nullable=False),
        sa.Column("started_at", TIMESTAMP, nullable=False),
        sa.Column("finished_at", TIMESTAMP, nullable=True),
        sa.Column("parent_message_id", ID, nullable=True),
        sa.Column("parent_step_id", ID, nullable=True),
        sa.Column("depth", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_workflow_runs"),
    )
    op.create_index("ix_workflow_runs_owner_started", "workflow_runs", ["owner", "end_user", "started_at"])
    op.create_index("ix_workflow_runs_workflow_started", "workflow_runs", ["workflow_id", "started_at"])
    op.create_index("ix_workflow_runs_parent_message", "workflow_runs", ["parent_message_id"])
    op.create_table(
        "node_runs",
        sa.Column("seq", SEQUENCE, autoincrement=True, nullable=False),
        sa.Column("run_id", ID, nullable=False),
        sa.Column("node_id", sa.String(64), nullable=False),
        sa.Column("node_type", sa.String(16), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("inputs", sa.Text(), nullable=False),
        sa.Column("outputs", sa.Text(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("tokens", sa.Integer(), nullable=False),
        sa.Column("price", sa.Double(), nullable=False),
        sa.Column("latency", sa.Double(), nullable=False),
        sa.Column("started_at", TIMESTAMP, nullable=False),
        sa.Column("finished_at", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("seq", name="pk_node_runs"),
        sa.ForeignKeyConstraint(
            ["run_id"], ["workflow_runs.id"], name="fk_node_runs_run_id_workflow_runs", ondelete="CASCADE"
        ),
    )
    op.create_index("ix_node_runs_run_seq", "node_runs", ["run_id", "seq"])


def downgrade() -> None:
    op.drop_index("ix_node_runs_run_seq", table_name="node_runs")
    op.drop_table("node_runs")
    for name in ("ix_workflow_runs_parent_message", "ix_workflow_runs_workflow_started",
                 "ix_workflow_runs_owner_started"):
        op.drop_index(name, table_name="workflow_runs")
    op.drop_table("workflow_runs")
