"""Rows of the knowledge base: datasets, their documents, and the documents' chunks with vectors.

A vector is stored portably, as little-endian float32 bytes (BYTEA on PostgreSQL, BLOB on
SQLite), with its length; similarity is computed in Python (pgvector is not assumed).
`datasets.version` goes up with every added document, so that a process holding a dataset's
vectors in memory knows when to reload them, even when another process added the document.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Index, Integer, LargeBinary, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from domain.ids import OwnerId
from domain.knowledge.datasets import Chunk, Dataset, Document, DocumentStatus
from infrastructure.persistence.rows import ID, OWNER, TIMESTAMP, Base, utc

PLAIN_TEXT = "text/plain"
READY = DocumentStatus.READY.value


class DatasetRow(Base):
    __tablename__ = "datasets"
    __table_args__ = (Index("ix_datasets_owner", "owner"),)

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    owner: Mapped[str] = mapped_column(OWNER)
    name: Mapped[str] = mapped_column(String(200))
    version: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(TIMESTAMP)


class DocumentRow(Base):
    __tablename__ = "documents"
    __table_args__ = (Index("ix_documents_dataset", "dataset_id"),)

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    dataset_id: Mapped[str] = mapped_column(ID, ForeignKey("datasets.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(255))
    chunk_count: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(TIMESTAMP)
    # Migration 0011: what was sent, and the ingestion job's state (a document added in the request is
    # `ready` at once); `pending_text` holds the text while it is `indexing`, and is emptied after.
    media_type: Mapped[str] = mapped_column(String(32), default=PLAIN_TEXT, server_default=PLAIN_TEXT)
    size: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    status: Mapped[str] = mapped_column(String(16), default=READY, server_default=READY)
    error: Mapped[str] = mapped_column(Text, default="", server_default="")
    pending_text: Mapped[str] = mapped_column(Text, default="", server_default="")


class ChunkRow(Base):
    __tablename__ = "chunks"
    # (document_id, position): a document's chunks in order; ix_chunks_dataset: a dataset's vectors, read at once.
    __table_args__ = (
        UniqueConstraint("document_id", "position"),
        Index("ix_chunks_dataset", "dataset_id"),
    )

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    dataset_id: Mapped[str] = mapped_column(ID, ForeignKey("datasets.id", ondelete="CASCADE"))
    document_id: Mapped[str] = mapped_column(ID, ForeignKey("documents.id", ondelete="CASCADE"))
    document_name: Mapped[str] = mapped_column(String(255))
    position: Mapped[int] = mapped_column(Integer)
    text: Mapped[str] = mapped_column(Text)
    dim: Mapped[int] = mapped_column(Integer)
    vector: Mapped[bytes] = mapped_column(LargeBinary)


def dataset_to_domain(row: DatasetRow) -> Dataset:
    return Dataset(id=row.id, owner=OwnerId(row.owner), name=row.name, created_at=utc(row.created_at))


def dataset_from_domain(dataset: Dataset) -> DatasetRow:
    return DatasetRow(
        id=dataset.id, owner=dataset.owner, name=dataset.name, version=0, created_at=utc(dataset.created_at)
    )


def chunk_to_domain(row: ChunkRow) -> Chunk:
    return Chunk(
        id=row.id, dataset_id=row.dataset_id, document_id=row.document_id, document_name=row.document_name,
        position=row.position, text=row.text,
    )


def document_to_domain(row: DocumentRow) -> Document:
    return Document(id=row.id, dataset_id=row.dataset_id, name=row.name, media_type=row.media_type, size=row.size,
                    chunks=row.chunk_count, status=DocumentStatus(row.status), error=row.error)
