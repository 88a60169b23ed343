"""Initial schema: conversations, messages and their steps.

Revision ID: 0001
Revises:
Create Date: 2026-01-01 00:00:00

Written out in full rather than importing the rows, so that this revision keeps
describing the schema of its day when the rows change.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

if TYPE_CHECKING:
    from collections.abc import Sequence

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ID = sa.String(64)
TIMESTAMP = sa.DateTime(timezone=True)
JSON_DOC = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "conversations",
        sa.Column("id", ID, nullable=False),
        sa.Column("app_id", sa.String(255), nullable=False),
        sa.Column("owner", sa.String(255), nullable=False),
        sa.Column("summary", sa.Text(), nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("updated_at", TIMESTAMP, nullable=False),
        sa.Column("deleted_at", TIMESTAMP, nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_conversations"),
    )
    _create_messages()
    _create_message_agent_thoughts()


def _create_messages() -> None:
    op.create_table(
        "messages",
        sa.Column("seq", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True,
                  nullable=False),
        sa.Column("id", ID, nullable=False),
        sa.Column("conversation_id", ID, nullable=False),
        sa.Column("owner", sa.String(255), nullable=False),
        sa.Column("task_id", ID, nullable=False),
        sa.Column("query", sa.Text(), nullable=False),
        sa.Column("image_urls", JSON_DOC, nullable=False),
        sa.Column("answer", sa.Text(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("error", sa.Text(), nullable=False),
        sa.Column("prompt", sa.Text(), nullable=False),
        sa.Column("prompt_tokens", sa.Integer(), nullable=False),
        sa.Column("completion_tokens", sa.Integer(), nullable=False),
        sa.Column("total_price", sa.Double(), nullable=False),
        sa.Column("latency", sa.Double(), nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("updated_at", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("seq", name="pk_messages"),
        sa.UniqueConstraint("id", name="uq_messages_id"),
        sa.UniqueConstraint("task_id", name="uq_messages_task_id"),
        sa.ForeignKeyConstraint(
            ["conversation_id"], ["conversations.id"],
            name="fk_messages_conversation_id_conversations", ondelete="CASCADE",
        ),
    )
    op.create_index("ix_messages_conversation_created", "messages", ["conversation_id", "created_at", "seq"])
    op.create_index(
        "ix_messages_conversation_status_created", "messages",
        ["conversation_id", "status", "created_at", "seq"],
    )
    op.create_index("ix_messages_status_created", "messages", ["status", "created_at"])


def _create_message_agent_thoughts() -> None:
    op.create_table(
        "message_agent_thoughts",
        sa.Column("id", ID, nullable=False),
        sa.Column("message_id", ID, nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("event", sa.String(32), nullable=False),
        sa.Column("thought", sa.Text(), nullable=False),
        sa.Column("tool", sa.String(255), nullable=False),
        sa.Column("tool_input", JSON_DOC, nullable=False),
        sa.Column("observation", sa.Text(), nullable=False),
        sa.Column("prompt", sa.Text(), nullable=False),
        sa.Column("answer", sa.Text(), nullable=False),
        sa.Column("prompt_tokens", sa.Integer(), nullable=False),
        sa.Column("completion_tokens", sa.Integer(), nullable=False),
        sa.Column("price", sa.Double(), nullable=False),
        sa.Column("latency", sa.Double(), nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_message_agent_thoughts"),
        sa.UniqueConstraint("message_id", "position", name="uq_message_agent_thoughts_message_id_position"),
        sa.ForeignKeyConstraint(
            ["message_id"], ["messages.id"],
            name="fk_message_agent_thoughts_message_id_messages", ondelete="CASCADE",
        ),
    )


def downgrade() -> None:
    op.drop_table("message_agent_thoughts")
    op.drop_index("ix_messages_status_created", table_name="messages")
    op.drop_index("ix_messages_conversation_status_created", table_name="messages")
    op.drop_index("ix_messages_conversation_created", table_name="messages")
    op.drop_table("messages")
    op.drop_table("conversations")
