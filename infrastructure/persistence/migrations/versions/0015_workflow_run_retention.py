"""Retention of workflow runs: direct runs (no parent message) by `started_at`, so that each prune
batch finds the oldest without reading the runs that turns called, which go with their messages.

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-22 12:00:00

Partial, like 0009's indexes: only direct runs are in it. On PostgreSQL it is built CONCURRENTLY,
outside a transaction, so that runs keep being recorded while it is built.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import sqlalchemy as sa
from alembic import op

if TYPE_CHECKING:
    from collections.abc import Sequence

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NAME, TABLE = "ix_workflow_runs_direct_started", "workflow_runs"
DIRECT = sa.text("parent_message_id IS NULL")


def upgrade() -> None:
    if op.get_context().dialect.name == "postgresql":
        with op.get_context().autocommit_block():
            op.create_index(NAME, TABLE, ["started_at"], postgresql_where=DIRECT, postgresql_concurrently=True)
    else:
        op.create_index(NAME, TABLE, ["started_at"], sqlite_where=DIRECT)


def downgrade() -> None:
    op.drop_index(NAME, table_name=TABLE)
