"""Knowledge bases: datasets, their documents, and the documents' chunks with their vectors.

Revision ID: 0003
Revises: 0002
Create Date: 2026-01-03 00:00:00

Written out in full rather than importing the rows, like 0001. A vector is float32 bytes
(BYTEA / BLOB); similarity is computed by the application, so no extension is needed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import sqlalchemy as sa
from alembic import op

if TYPE_CHECKING:
    from collections.abc import Sequence

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ID = sa.String(64)
TIMESTAMP = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "datasets",
        sa.Column("id", ID, nullable=False),
        sa.Column("owner", sa.String(255), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_datasets"),
    )
    op.create_index("ix_datasets_owner", "datasets", ["owner"])
    op.create_table(
        "documents",
        sa.Column("id", ID, nullable=False),
        sa.Column("dataset_id", ID, nullable=False),
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("chunk_count", sa.Integer(), nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_documents"),
        sa.ForeignKeyConstraint(
            ["dataset_id"], ["datasets.id"], name="fk_documents_dataset_id_datasets", ondelete="CASCADE"
        ),
    )
    op.create_index("ix_documents_dataset", "documents", ["dataset_id"])
    op.create_table(
        "chunks",
        sa.Column("id", ID, nullable=False),
        sa.Column("dataset_id", ID, nullable=False),
        sa.Column("document_id", ID, nullable=False),
        sa.Column("document_name", sa.String(255), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("dim", sa.Integer(), nullable=False),
        sa.Column("vector", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_chunks"),
        sa.UniqueConstraint("document_id", "position", name="uq_chunks_document_id_position"),
        sa.ForeignKeyConstraint(
            ["dataset_id"], ["datasets.id"], name="fk_chunks_dataset_id_datasets", ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["document_id"], ["documents.id"], name="fk_chunks_document_id_documents", ondelete="CASCADE"
        ),
    )
    op.create_index("ix_chunks_dataset", "chunks", ["dataset_id"])


def downgrade() -> None:
    op.drop_index("ix_chunks_dataset", table_name="chunks")
    op.drop_table("chunks")
    op.drop_index("ix_documents_dataset", table_name="documents")
    op.drop_table("documents")
    op.drop_index("ix_datasets_owner", table_name="datasets")
    op.drop_table("datasets")
