"""The memory record: entities with their whole history and user facts (`memory_entities`),
archive entries and summaries as recall items with their vectors (`memory_items`).

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01 12:00:00

Memory kept before this revision lived only in the memory store (Redis or the process); it is
not copied: the rolling summary was already in SQL and is indexed again at its next update.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import sqlalchemy as sa
from alembic import op

if TYPE_CHECKING:
    from collections.abc import Sequence

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ID = sa.String(64)
OWNER = sa.String(255)
END_USER = sa.String(256)
TIMESTAMP = sa.DateTime(timezone=True)
SEQUENCE = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "memory_entities",
        sa.Column("id", SEQUENCE, autoincrement=True, nullable=False),
        sa.Column("owner", OWNER, nullable=False),
        sa.Column("end_user", END_USER, nullable=False),
        sa.Column("conversation_id", ID, nullable=False),
        sa.Column("agent_id", sa.String(255), nullable=False),
        sa.Column("type", sa.String(64), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.Column("confidence", sa.Double(), nullable=False),
        sa.Column("scope", sa.String(16), nullable=False),
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("explicit", sa.Boolean(), server_default=sa.true(), nullable=False),
        sa.Column("source_message_id", ID, nullable=False),
        sa.Column("source_conversation_id", ID, nullable=False),
        sa.Column("valid_from", TIMESTAMP, nullable=False),
        sa.Column("superseded_at", TIMESTAMP, nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_memory_entities"),
    )
    op.create_index(
        "ix_memory_entities_holder", "memory_entities", ["owner", "end_user", "conversation_id", "agent_id", "type"]
    )
    op.create_index("ix_memory_entities_conversation", "memory_entities", ["conversation_id"])
    op.create_table(
        "memory_items",
        sa.Column("id", sa.String(80), nullable=False),
        sa.Column("conversation_id", ID, nullable=False),
        sa.Column("owner", OWNER, nullable=False),
        sa.Column("end_user", END_USER, nullable=False),
        sa.Column("agent_id", sa.String(255), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("source_message_ids", sa.Text(), nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("model", sa.String(255), nullable=True),
        sa.Column("vector", sa.LargeBinary(), nullable=True),
        sa.Column("recall_scope", sa.String(16), server_default="none", nullable=False),
        sa.Column("changed_at", TIMESTAMP, nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_memory_items"),
    )
    op.create_index("ix_memory_items_user", "memory_items", ["owner", "end_user", "conversation_id"])
    op.create_index("ix_memory_items_conversation", "memory_items", ["conversation_id", "kind", "created_at"])
    recall = ["owner", "end_user", "recall_scope", "model", "agent_id", "changed_at"]
    op.create_index("ix_memory_items_recall", "memory_items", recall)


def downgrade() -> None:
    op.drop_table("memory_items")
    op.drop_table("memory_entities")
