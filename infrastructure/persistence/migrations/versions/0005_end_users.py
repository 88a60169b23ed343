"""End users and conversation lists: whose a conversation is, its title and pin, its activity;
each message's end user, agent, regeneration, rating, follow-ups and time to first token; keys
bound to one agent.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01 00:00:00

Rows written before this revision belong to their account itself (end user ""), and are filled
from their conversation (messages) or their messages (a conversation's activity and count).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

if TYPE_CHECKING:
    from collections.abc import Sequence

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ID = sa.String(64)
END_USER = sa.String(256)
TIMESTAMP = sa.DateTime(timezone=True)
JSON_DOC = sa.JSON().with_variant(JSONB(), "postgresql")

_CONVERSATION_COLUMNS: tuple[sa.Column[object], ...] = (
    sa.Column("end_user", END_USER, server_default="", nullable=False),
    sa.Column("title", sa.String(255), server_default="", nullable=False),
    sa.Column("title_by_user", sa.Boolean(), server_default=sa.false(), nullable=False),
    sa.Column("pinned", sa.Boolean(), server_default=sa.false(), nullable=False),
    sa.Column("last_active_at", TIMESTAMP, nullable=True),
    sa.Column("message_count", sa.Integer(), server_default="0", nullable=False),
)
_MESSAGE_COLUMNS: tuple[sa.Column[object], ...] = (
    sa.Column("end_user", END_USER, server_default="", nullable=False),
    sa.Column("app_id", sa.String(255), server_default="", nullable=False),
    sa.Column("parent_message_id", ID, nullable=True),
    sa.Column("superseded", sa.Boolean(), server_default=sa.false(), nullable=False),
    sa.Column("rating", sa.String(16), nullable=True),
    sa.Column("rating_note", sa.Text(), server_default="", nullable=False),
    sa.Column("follow_ups", JSON_DOC, nullable=True),
    sa.Column("first_token_latency", sa.Double(), nullable=True),
)
_INDEXES = (
    ("ix_conversations_owner_active", "conversations", ["owner", "last_active_at", "id"]),
    ("ix_conversations_owner_end_user_active", "conversations", ["owner", "end_user", "last_active_at", "id"]),
    ("ix_messages_app_created", "messages", ["app_id", "created_at"]),
    ("ix_api_keys_agent_id", "api_keys", ["agent_id"]),
)

# Plain ALTER TABLE … ADD COLUMN and UPDATE, never a batch "move and copy" on SQLite (see 0004).
_BACKFILL = (
    "UPDATE conversations SET message_count = "
    "(SELECT count(*) FROM messages WHERE messages.conversation_id = conversations.id)",
    "UPDATE conversations SET last_active_at = coalesce("
    "(SELECT max(messages.created_at) FROM messages WHERE messages.conversation_id = conversations.id), "
    "conversations.created_at)",
    "UPDATE messages SET app_id = "
    "(SELECT conversations.app_id FROM conversations WHERE conversations.id = messages.conversation_id)",
)


def upgrade() -> None:
    for column in _CONVERSATION_COLUMNS:
        op.add_column("conversations", column)
    for column in _MESSAGE_COLUMNS:
        op.add_column("messages", column)
    op.add_column("api_keys", sa.Column("agent_id", sa.String(255), nullable=True))
    for statement in _BACKFILL:
        op.execute(statement)
    for name, table, columns in _INDEXES:
        op.create_index(name, table, columns)


def downgrade() -> None:
    for name, table, _ in reversed(_INDEXES):
        op.drop_index(name, table_name=table)
    op.drop_column("api_keys", "agent_id")
    for column in reversed(_MESSAGE_COLUMNS):
        op.drop_column("messages", column.name)
    for column in reversed(_CONVERSATION_COLUMNS):
        op.drop_column("conversations", column.name)
