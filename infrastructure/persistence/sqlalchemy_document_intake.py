"""DocumentIntake on SQLAlchemy 2 async: documents kept with their text while an ingestion job
indexes them, on SQLite or PostgreSQL. Completing one is a compare-and-set on its status, so a job
run twice (its worker was lost after the commit) stores its chunks once."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy import select, update

from application.ports.document_intake import DocumentIntake
from domain.knowledge.datasets import DocumentStatus, PendingDocument
from infrastructure.persistence.chunk_writes import write_chunks
from infrastructure.persistence.knowledge_rows import DatasetRow, DocumentRow, document_to_domain

if TYPE_CHECKING:
    from collections.abc import Sequence
    from datetime import datetime

    from domain.ids import OwnerId
    from domain.knowledge.datasets import Chunk, Document
    from infrastructure.persistence.database import Database

INDEXING = DocumentStatus.INDEXING.value


class SqlAlchemyDocumentIntake(DocumentIntake):
    def __init__(self, database: Database) -> None:
        self._db = database

    async def add_pending(self, pending: PendingDocument, at: datetime) -> None:
        document = pending.document
        async with self._db.transaction("add_pending_document") as session:
            session.add(DocumentRow(
                id=document.id, dataset_id=document.dataset_id, name=document.name, chunk_count=0, created_at=at,
                media_type=document.media_type, size=document.size, status=INDEXING, error="",
                pending_text=pending.text,
            ))

    async def pending(self, document_id: str) -> PendingDocument | None:
        async with self._db.transaction("read_pending_document") as session:
            row = await session.scalar(
                select(DocumentRow).where(DocumentRow.id == document_id, DocumentRow.status == INDEXING)
            )
            return PendingDocument(document_to_domain(row), row.pending_text) if row is not None else None

    async def complete(self, document_id: str, chunks: Sequence[Chunk], vectors: Sequence[Sequence[float]]) -> bool:
        if len(chunks) != len(vectors):
            raise ValueError(f"{len(chunks)} chunks but {len(vectors)} vectors")
        async with self._db.transaction("complete_document") as session:
            claimed = await session.execute(
                update(DocumentRow)
                .where(DocumentRow.id == document_id, DocumentRow.status == INDEXING)
                .values(status=DocumentStatus.READY.value, pending_text="", error="")
                .execution_options(synchronize_session=False)
            )
            if claimed.rowcount != 1:  # type: ignore[attr-defined]
                return False
            if chunks:
                await write_chunks(session, chunks, vectors)
        return True

    async def fail(self, document_id: str, error: str) -> None:
        async with self._db.transaction("fail_document") as session:
            await session.execute(
                update(DocumentRow)
                .where(DocumentRow.id == document_id, DocumentRow.status == INDEXING)
                .values(status=DocumentStatus.FAILED.value, error=error[:1000], pending_text="")
                .execution_options(synchronize_session=False)
            )

    async def get_document(self, dataset_id: str, document_id: str, owner: OwnerId) -> Document | None:
        async with self._db.transaction("get_document") as session:
            row = await session.scalar(
                select(DocumentRow)
                .join(DatasetRow, DatasetRow.id == DocumentRow.dataset_id)
                .where(DocumentRow.id == document_id, DocumentRow.dataset_id == dataset_id, DatasetRow.owner == owner)
            )
            return document_to_domain(row) if row is not None else None
