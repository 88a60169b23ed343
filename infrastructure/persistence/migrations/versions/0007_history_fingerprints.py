"""The fingerprint of each conversation's completed turns, for the OpenAI-compatible API: a client
that resends its history lands in the conversation that holds it. `history_prefix`: the history a
client brought when it began the conversation, which the fingerprint continues.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01 15:30:00

Conversations from before this revision get the fingerprint of no history (""): a client resending
their turns starts a new conversation once, whose fingerprint is then kept.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import sqlalchemy as sa
from alembic import op

if TYPE_CHECKING:
    from collections.abc import Sequence

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "conversations", sa.Column("history_fingerprint", sa.String(64), server_default="", nullable=False)
    )
    op.add_column("conversations", sa.Column("history_prefix", sa.String(64), server_default="", nullable=False))
    op.create_index(
        "ix_conversations_history", "conversations", ["owner", "end_user", "app_id", "history_fingerprint"]
    )


def downgrade() -> None:
    op.drop_index("ix_conversations_history", table_name="conversations")
    op.drop_column("conversations", "history_prefix")
    op.drop_column("conversations", "history_fingerprint")
