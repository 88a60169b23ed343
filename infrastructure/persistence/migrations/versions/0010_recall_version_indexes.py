"""Recall's version queries from the index alone: a turn reads them twice, and on SQLite a row of
`memory_items` (its vector, its sources) spans overflow pages that the columns after the vector
(`recall_scope`, `changed_at`) are read through.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-12 12:00:00

`ix_memory_items_conversation` gains `changed_at` (the archive's version: count and newest
`changed_at` of a conversation's entries); `ix_memory_items_recall` gains `conversation_id`
before `changed_at` (a user's recall leaves the turn's own conversation out). On PostgreSQL the
new index is built CONCURRENTLY beside the old one, which is then dropped CONCURRENTLY and its
name taken, so that turns are never without one; SQLite replaces it in the migration's transaction.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from alembic import op

if TYPE_CHECKING:
    from collections.abc import Sequence

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLE = "memory_items"
# (name, columns before, columns after)
INDEXES = (
    ("ix_memory_items_conversation", ["conversation_id", "kind", "created_at"],
     ["conversation_id", "kind", "created_at", "changed_at"]),
    ("ix_memory_items_recall", ["owner", "end_user", "recall_scope", "model", "agent_id", "changed_at"],
     ["owner", "end_user", "recall_scope", "model", "agent_id", "conversation_id", "changed_at"]),
)


def upgrade() -> None:
    for name, _, columns in INDEXES:
        _replace(name, columns)


def downgrade() -> None:
    for name, columns, _ in reversed(INDEXES):
        _replace(name, columns)


def _replace(name: str, columns: list[str]) -> None:
    if op.get_context().dialect.name != "postgresql":
        op.drop_index(name, table_name=TABLE)
        op.create_index(name, TABLE, columns)
        return
    building = f"{name}_0010"
    with op.get_context().autocommit_block():
        # Each step can be run again: a build an interrupted run left behind (invalid, or the
        # one index left if it stopped before the rename) goes, and is built again.
        op.drop_index(building, table_name=TABLE, postgresql_concurrently=True, if_exists=True)
        op.create_index(building, TABLE, columns, postgresql_concurrently=True)
        op.drop_index(name, table_name=TABLE, postgresql_concurrently=True, if_exists=True)
        op.execute(f"ALTER INDEX {building} RENAME TO {name}")
