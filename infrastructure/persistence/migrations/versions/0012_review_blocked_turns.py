"""Messages record which review kept their exchange out of memory (`blocked_by`: `input` when the
input review refused the query, `output` when the output review replaced the answer; NULL for
neither), so that a window rebuilt from the record leaves them out as the live window does.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-14 12:00:00

Earlier refusals are found by the step every refused turn recorded (its thought is the run's fixed
`INPUT_REVIEW_HIT` sentence, copied here: a migration never imports the code it outlives); those
whose steps retention already pruned, and earlier replacements (which left no trace), stay NULL.
Plain ALTER TABLE … ADD COLUMN on both backends (never SQLite's batch copy, see 0011).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import sqlalchemy as sa
from alembic import op

if TYPE_CHECKING:
    from collections.abc import Sequence

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

INPUT_REVIEW_HIT = "The input review matched a blocked keyword; the preset answer ended the turn."
_BACKFILL = sa.text(
    "UPDATE messages SET blocked_by = 'input' WHERE id IN (SELECT message_id FROM message_agent_thoughts "
    "WHERE event = 'agent_message' AND thought = :refused)"
).bindparams(refused=INPUT_REVIEW_HIT)


def upgrade() -> None:
    op.add_column("messages", sa.Column("blocked_by", sa.String(16), nullable=True))
    op.execute(_BACKFILL)


def downgrade() -> None:
    op.drop_column("messages", "blocked_by")
