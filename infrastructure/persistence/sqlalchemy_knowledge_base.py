"""KnowledgeBase on SQLAlchemy 2 async: datasets, documents and chunks on SQLite or PostgreSQL.

Similarity is computed in Python, with numpy, over an in-process cache of each dataset's
chunks and vectors (one normalised float32 matrix per dataset). A search reads the datasets'
versions (one small query, which also enforces the owner), reloads a dataset whose version
moved (a document was added, by this process or another), and scores every chunk with one
matrix product. pgvector is not used: it is not available everywhere memagent runs, and brute
force over a cached matrix keeps a 10,000-chunk search within a few milliseconds of compute.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from sqlalchemy import func, select

from application.ports.dataset_inventory import DatasetCounts, DatasetInventory
from application.ports.knowledge_base import KnowledgeBase
from domain.knowledge.datasets import Chunk, Dataset, ScoredChunk
from infrastructure.persistence.chunk_writes import VECTOR_DTYPE, write_chunks
from infrastructure.persistence.knowledge_rows import (
    ChunkRow,
    DatasetRow,
    DocumentRow,
    chunk_to_domain,
    dataset_from_domain,
    dataset_to_domain,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from sqlalchemy.ext.asyncio import AsyncSession

    from domain.ids import OwnerId
    from infrastructure.persistence.database import Database

log = logging.getLogger(__name__)

DEFAULT_CACHE_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class _Vectors:
    """One dataset's chunks whose vectors have one length, and those vectors, normalised."""

    chunks: tuple[Chunk, ...]
    matrix: np.ndarray  # shape (len(chunks), dim), float32, rows of norm 1 (or 0)


@dataclass(frozen=True, slots=True)
class _Cached:
    version: int
    by_dim: dict[int, _Vectors]

    @property
    def nbytes(self) -> int:
        return sum(v.matrix.nbytes + sum(len(c.text) for c in v.chunks) for v in self.by_dim.values())


class SqlAlchemyKnowledgeBase(KnowledgeBase, DatasetInventory):
    """Each method is one transaction; every database failure surfaces as `StoreUnavailable`."""

    def __init__(self, database: Database, cache_bytes: int = DEFAULT_CACHE_BYTES) -> None:
        self._db = database
        self._cache: OrderedDict[str, _Cached] = OrderedDict()
        self._cache_bytes = cache_bytes

    async def add_dataset(self, dataset: Dataset) -> None:
        async with self._db.transaction("add_dataset") as session:
            session.add(dataset_from_domain(dataset))

    async def get_dataset(self, dataset_id: str, owner: OwnerId) -> Dataset | None:
        async with self._db.transaction("get_dataset") as session:
            row = await session.scalar(
                select(DatasetRow).where(DatasetRow.id == dataset_id, DatasetRow.owner == owner)
            )
        return dataset_to_domain(row) if row is not None else None

    async def list_datasets(self, owner: OwnerId, offset: int, limit: int) -> list[Dataset]:
        async with self._db.transaction("list_datasets") as session:
            rows = await session.scalars(
                select(DatasetRow)
                .where(DatasetRow.owner == owner)
                .order_by(DatasetRow.created_at.desc(), DatasetRow.id)
                .offset(offset)
                .limit(limit)
            )
            return [dataset_to_domain(row) for row in rows]

    async def add_chunks(self, chunks: Sequence[Chunk], vectors: Sequence[Sequence[float]]) -> None:
        if len(chunks) != len(vectors):
            raise ValueError(f"{len(chunks)} chunks but {len(vectors)} vectors")
        if not chunks:
            return
        async with self._db.transaction("add_chunks") as session:
            touched = await write_chunks(session, chunks, vectors)
        for dataset_id in touched:
            self._cache.pop(dataset_id, None)

    async def counts(self, dataset_id: str) -> DatasetCounts:
        async with self._db.transaction("count_dataset") as session:
            documents, chunks = (
                await session.execute(
                    select(func.count(DocumentRow.id), func.coalesce(func.sum(DocumentRow.chunk_count), 0)).where(
                        DocumentRow.dataset_id == dataset_id
                    )
                )
            ).one()
        return DatasetCounts(int(documents), int(chunks))

    async def search(
        self, owner: OwnerId, dataset_ids: Sequence[str], vector: Sequence[float], top_k: int, min_score: float
    ) -> list[ScoredChunk]:
        if not dataset_ids or top_k < 1:
            return []
        query = np.asarray(vector, dtype=VECTOR_DTYPE)
        norm = float(np.linalg.norm(query))
        if norm == 0.0:
            return []
        query = query / norm
        async with self._db.transaction("search") as session:
            versions = (
                await session.execute(
                    select(DatasetRow.id, DatasetRow.version).where(
                        DatasetRow.id.in_(set(dataset_ids)), DatasetRow.owner == owner
                    )
                )
            ).all()
            cached = [await self._vectors(session, dataset_id, version) for dataset_id, version in versions]
        found: list[ScoredChunk] = []
        for dataset in cached:
            vectors = dataset.by_dim.get(len(query))
            if vectors is not None and vectors.chunks:
                found.extend(_best(vectors, query, top_k, min_score))
        found.sort(key=lambda s: (-s.score, s.chunk.dataset_id, s.chunk.document_id, s.chunk.position))
        return found[:top_k]

    async def _vectors(self, session: AsyncSession, dataset_id: str, version: int) -> _Cached:
        cached = self._cache.get(dataset_id)
        if cached is not None and cached.version == version:
            self._cache.move_to_end(dataset_id)
            return cached
        rows = await session.scalars(
            select(ChunkRow).where(ChunkRow.dataset_id == dataset_id).order_by(ChunkRow.document_id, ChunkRow.position)
        )
        grouped: dict[int, tuple[list[Chunk], list[bytes]]] = {}
        for row in rows:
            chunks, blobs = grouped.setdefault(row.dim, ([], []))
            chunks.append(chunk_to_domain(row))
            blobs.append(row.vector)
        by_dim = {}
        for dim, (chunks, blobs) in grouped.items():
            matrix = np.frombuffer(b"".join(blobs), dtype=VECTOR_DTYPE).reshape(len(chunks), dim)
            norms = np.linalg.norm(matrix, axis=1, keepdims=True)
            unit = np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)
            by_dim[dim] = _Vectors(tuple(chunks), unit)
        if len(grouped) > 1:
            log.warning("dataset %s holds vectors of %d lengths (%s): the embedder changed; only vectors as long"
                        " as the query's are searched", dataset_id, len(grouped), sorted(grouped))
        cached = _Cached(version, by_dim)
        self._remember(dataset_id, cached)
        return cached

    def _remember(self, dataset_id: str, cached: _Cached) -> None:
        self._cache[dataset_id] = cached
        self._cache.move_to_end(dataset_id)
        total = sum(c.nbytes for c in self._cache.values())
        while total > self._cache_bytes and len(self._cache) > 1:
            _, evicted = self._cache.popitem(last=False)
            total -= evicted.nbytes


def _best(vectors: _Vectors, query: np.ndarray, top_k: int, min_score: float) -> list[ScoredChunk]:
    scores = vectors.matrix @ query
    count = min(top_k, len(scores))
    top = np.argpartition(-scores, count - 1)[:count] if count < len(scores) else np.arange(len(scores))
    return [ScoredChunk(vectors.chunks[i], float(scores[i])) for i in top if scores[i] >= min_score]
