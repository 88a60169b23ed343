"""The model-call ledger: every call to a model, with its tokens, cost, latency and purpose.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-10 09:00:00

Written out in full rather than importing the rows, like 0001. No foreign keys: a ledger row outlives
the conversation and message it names (it is the account's bill), until the ledger's own retention.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import sqlalchemy as sa
from alembic import op

if TYPE_CHECKING:
    from collections.abc import Sequence

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ID = sa.String(64)
TIMESTAMP = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "model_calls",
        sa.Column("id", ID, nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("owner", sa.String(255), nullable=False),
        sa.Column("agent_id", sa.String(255), nullable=False),
        sa.Column("conversation_id", ID, nullable=True),
        sa.Column("message_id", ID, nullable=True),
        sa.Column("agent_version", sa.Integer(), nullable=True),
        sa.Column("debug", sa.Boolean(), nullable=False),
        sa.Column("purpose", sa.String(32), nullable=False),
        sa.Column("profile", sa.String(255), nullable=False),
        sa.Column("model", sa.String(255), nullable=False),
        sa.Column("prompt_tokens", sa.Integer(), nullable=False),
        sa.Column("completion_tokens", sa.Integer(), nullable=False),
        sa.Column("cost_usd", sa.Double(), nullable=False),
        sa.Column("latency", sa.Double(), nullable=False),
        sa.Column("estimated", sa.Boolean(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_model_calls"),
    )
    op.create_index("ix_model_calls_owner_created", "model_calls", ["owner", "created_at"])
    op.create_index("ix_model_calls_agent_created", "model_calls", ["agent_id", "created_at"])
    op.create_index("ix_model_calls_conversation", "model_calls", ["conversation_id"])
    op.create_index("ix_model_calls_created", "model_calls", ["created_at"])


def downgrade() -> None:
    for name in ("ix_model_calls_created", "ix_model_calls_conversation", "ix_model_calls_agent_created",
                 "ix_model_calls_owner_created"):
        op.drop_index(name, table_name="model_calls")
    op.drop_table("model_calls")
