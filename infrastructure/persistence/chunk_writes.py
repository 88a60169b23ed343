"""Writing a document's chunks with their vectors, inside a caller's transaction: the documents'
rows (created, or their chunk counts raised), the chunks, and each touched dataset's `version`,
so that every process holding a dataset's vectors reloads them (knowledge_rows.py)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

import numpy as np
from sqlalchemy import insert, update

from infrastructure.persistence.knowledge_rows import ChunkRow, DatasetRow, DocumentRow

if TYPE_CHECKING:
    from collections.abc import Sequence

    from sqlalchemy.ext.asyncio import AsyncSession

    from domain.knowledge.datasets import Chunk

VECTOR_DTYPE = np.dtype("<f4")


def to_bytes(vector: Sequence[float]) -> bytes:
    return np.asarray(vector, dtype=VECTOR_DTYPE).tobytes()


async def write_chunks(session: AsyncSession, chunks: Sequence[Chunk], vectors: Sequence[Sequence[float]]) -> set[str]:
    """The datasets touched."""
    documents: dict[str, tuple[str, str, int]] = {}
    for chunk in chunks:
        _, _, count = documents.get(chunk.document_id, (chunk.dataset_id, chunk.document_name, 0))
        documents[chunk.document_id] = (chunk.dataset_id, chunk.document_name, count + 1)
    rows = [
        {
            "id": c.id, "dataset_id": c.dataset_id, "document_id": c.document_id,
            "document_name": c.document_name, "position": c.position, "text": c.text,
            "dim": len(v), "vector": to_bytes(v),
        }
        for c, v in zip(chunks, vectors, strict=True)
    ]
    for document_id, (dataset_id, name, count) in documents.items():
        existing = await session.get(DocumentRow, document_id)
        if existing is None:
            session.add(DocumentRow(id=document_id, dataset_id=dataset_id, name=name, chunk_count=count,
                                    created_at=datetime.now(UTC)))
        else:
            existing.chunk_count += count
    await session.flush()
    await session.execute(insert(ChunkRow), rows)
    touched = {dataset_id for dataset_id, _, _ in documents.values()}
    await session.execute(
        update(DatasetRow)
        .where(DatasetRow.id.in_(touched))
        .values(version=DatasetRow.version + 1)
        .execution_options(synchronize_session=False)
    )
    return touched
