"""Workflows as data: workflows with their draft graphs, and their published versions.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-20 12:00:00

Written out in full rather than importing the rows, like 0004. A graph and a tool schema are JSON
text. A name is unique among an owner's workflows that are not archived: a partial unique index,
which SQLite and PostgreSQL both have.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import sqlalchemy as sa
from alembic import op

if TYPE_CHECKING:
    from collections.abc import Sequence

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ID = sa.String(64)
OWNER = sa.String(255)
TIMESTAMP = sa.DateTime(timezone=True)
NOT_ARCHIVED = sa.text("NOT archived")


def upgrade() -> None:
    op.create_table(
        "workflows",
        sa.Column("id", ID, nullable=False),
        sa.Column("owner", OWNER, nullable=False),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("graph", sa.Text(), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("latest_version", sa.Integer(), server_default="0", nullable=False),
        sa.Column("archived", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("updated_at", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_workflows"),
    )
    op.create_index("ix_workflows_owner_created", "workflows", ["owner", "created_at"])
    op.create_index("uq_workflows_owner_name", "workflows", ["owner", "name"], unique=True,
                    sqlite_where=NOT_ARCHIVED, postgresql_where=NOT_ARCHIVED)
    op.create_table(
        "workflow_versions",
        sa.Column("workflow_id", ID, nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("owner", OWNER, nullable=False),
        sa.Column("graph", sa.Text(), nullable=False),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("tool_schema", sa.Text(), nullable=False),
        sa.Column("published_at", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("workflow_id", "number", name="pk_workflow_versions"),
        sa.ForeignKeyConstraint(
            ["workflow_id"], ["workflows.id"], name="fk_workflow_versions_workflow_id_workflows", ondelete="CASCADE"
        ),
    )


def downgrade() -> None:
    op.drop_table("workflow_versions")
    op.drop_index("uq_workflows_owner_name", table_name="workflows")
    op.drop_index("ix_workflows_owner_created", table_name="workflows")
    op.drop_table("workflows")
