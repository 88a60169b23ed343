"""Agents as data: agents with their drafts, their published versions, and what each turn ran.

Revision ID: 0004
Revises: 0003
Create Date: 2026-01-04 00:00:00

Written out in full rather than importing the rows, like 0001. A config is JSON text. The new
columns of existing tables have server defaults, so rows written before this revision read as
turns of the API (`entry_point` 'api', no version) in conversations that are not the debugger's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import sqlalchemy as sa
from alembic import op

if TYPE_CHECKING:
    from collections.abc import Sequence

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ID = sa.String(64)
TIMESTAMP = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "agents",
        sa.Column("id", ID, nullable=False),
        sa.Column("owner", sa.String(255), nullable=False),
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("draft_config", sa.Text(), nullable=False),
        sa.Column("draft_revision", sa.Integer(), nullable=False),
        sa.Column("draft_updated_at", TIMESTAMP, nullable=False),
        sa.Column("latest_version", sa.Integer(), server_default="0", nullable=False),
        sa.Column("pinned_version", sa.Integer(), nullable=True),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("updated_at", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_agents"),
    )
    op.create_index("ix_agents_owner_created", "agents", ["owner", "created_at"])
    op.create_table(
        "agent_versions",
        sa.Column("agent_id", ID, nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("config", sa.Text(), nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("agent_id", "version", name="pk_agent_versions"),
        sa.ForeignKeyConstraint(
            ["agent_id"], ["agents.id"], name="fk_agent_versions_agent_id_agents", ondelete="CASCADE"
        ),
    )
    # Plain ALTER TABLE … ADD COLUMN on both backends, never a batch "move and copy" on SQLite: with
    # foreign keys on, dropping the old conversations table would cascade to every message.
    op.add_column("conversations", sa.Column("is_debug", sa.Boolean(), server_default=sa.false(), nullable=False))
    op.add_column("messages", sa.Column("agent_version", sa.Integer(), nullable=True))
    op.add_column("messages", sa.Column("draft_revision", sa.Integer(), nullable=True))
    op.add_column("messages", sa.Column("entry_point", sa.String(16), server_default="api", nullable=False))


def downgrade() -> None:
    # ALTER TABLE … DROP COLUMN (SQLite 3.35+), for the same reason as above.
    for column in ("entry_point", "draft_revision", "agent_version"):
        op.drop_column("messages", column)
    op.drop_column("conversations", "is_debug")
    op.drop_table("agent_versions")
    op.drop_index("ix_agents_owner_created", table_name="agents")
    op.drop_table("agents")
