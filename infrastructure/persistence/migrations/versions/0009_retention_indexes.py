"""Retention's indexes: each prune batch finds its rows oldest first without reading the rest.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-10 12:00:00

Steps by `created_at`; steps and messages that still hold a prompt snapshot (partial: an emptied
prompt leaves the index); deleted conversations by `deleted_at` (partial: only deleted ones). On
PostgreSQL they are built CONCURRENTLY, outside a transaction, so that a large table keeps taking
turns while its index is built.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import sqlalchemy as sa
from alembic import op

if TYPE_CHECKING:
    from collections.abc import Sequence

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

HOLDS_PROMPT = "prompt <> ''"
DELETED = "deleted_at IS NOT NULL"
# (name, table, column, the partial index's condition or None)
INDEXES = (
    ("ix_message_agent_thoughts_created", "message_agent_thoughts", "created_at", None),
    ("ix_message_agent_thoughts_prompt_created", "message_agent_thoughts", "created_at", HOLDS_PROMPT),
    ("ix_messages_prompt_created", "messages", "created_at", HOLDS_PROMPT),
    ("ix_conversations_deleted", "conversations", "deleted_at", DELETED),
)


def upgrade() -> None:
    postgresql = op.get_context().dialect.name == "postgresql"
    for name, table, column, where in INDEXES:
        condition = sa.text(where) if where is not None else None
        if postgresql:
            with op.get_context().autocommit_block():
                op.create_index(name, table, [column], postgresql_where=condition,
                                postgresql_concurrently=True)
        else:
            op.create_index(name, table, [column], sqlite_where=condition)


def downgrade() -> None:
    for name, table, _, _ in reversed(INDEXES):
        op.drop_index(name, table_name=table)
