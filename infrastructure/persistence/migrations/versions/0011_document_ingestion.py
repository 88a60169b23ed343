"""Documents indexed by a job: what was sent (media type, size), the state of the ingestion job
(`status`, `error`) and the text it reads (`pending_text`, emptied once indexed).

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-13 12:00:00

Documents added before were indexed in their request: they are `ready`. Plain ALTER TABLE … ADD
COLUMN on both backends (never SQLite's batch copy: with foreign keys on, dropping the old table
would cascade to the chunks).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import sqlalchemy as sa
from alembic import op

if TYPE_CHECKING:
    from collections.abc import Sequence

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _columns() -> list[sa.Column[object]]:
    return [
        sa.Column("media_type", sa.String(32), server_default="text/plain", nullable=False),
        sa.Column("size", sa.Integer(), server_default="0", nullable=False),
        sa.Column("status", sa.String(16), server_default="ready", nullable=False),
        sa.Column("error", sa.Text(), server_default="", nullable=False),
        sa.Column("pending_text", sa.Text(), server_default="", nullable=False),
    ]


def upgrade() -> None:
    for column in _columns():
        op.add_column("documents", column)


def downgrade() -> None:
    for column in reversed(_columns()):
        op.drop_column("documents", column.name)
