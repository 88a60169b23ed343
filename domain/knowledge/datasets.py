"""Knowledge bases: datasets of documents, cut into overlapping chunks for retrieval."""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from domain.errors import DomainError

if TYPE_CHECKING:
    from collections.abc import Sequence
    from datetime import datetime

    from domain.ids import OwnerId


@dataclass(frozen=True, slots=True)
class Dataset:
    id: str
    owner: OwnerId
    name: str
    created_at: datetime

    def __post_init__(self) -> None:
        if not self.name.strip() or len(self.name) > 200:
            raise DomainError("a dataset needs a name of 1 to 200 characters")


class DocumentStatus(StrEnum):
    INDEXING = "indexing"  # stored with its text, waiting for a job worker to cut and embed it
    READY = "ready"  # its chunks and their vectors are searchable
    FAILED = "failed"  # the last attempt to index it failed (`Document.error` says why)


@dataclass(frozen=True, slots=True)
class Document:
    """A document of a dataset, as its owner sees it: what was sent, and how far its indexing is."""

    id: str
    dataset_id: str
    name: str
    media_type: str
    size: int  # bytes of UTF-8 text
    chunks: int
    status: DocumentStatus = DocumentStatus.READY
    error: str = ""


@dataclass(frozen=True, slots=True)
class PendingDocument:
    """A checked document not indexed yet, with its text: what an ingestion job reads."""

    document: Document
    text: str


@dataclass(frozen=True, slots=True)
class Chunk:
    id: str
    dataset_id: str
    document_id: str
    document_name: str
    position: int
    text: str


@dataclass(frozen=True, slots=True)
class ScoredChunk:
    chunk: Chunk
    score: float


def split_into_chunks(text: str, size: int, overlap: int) -> list[str]:
    """Cut `text` into pieces of at most `size` characters, each repeating the last `overlap`
    characters of the one before, breaking at whitespace where one is near."""
    if size <= 0 or not 0 <= overlap < size:
        raise DomainError("chunk size must be positive and overlap within 0..size-1")
    text = text.strip()
    pieces: list[str] = []
    start = 0
    while start < len(text):
        end = min(len(text), start + size)
        if end < len(text):
            space = text.rfind(" ", start + size // 2, end)
            end = space if space > start else end
        pieces.append(text[start:end].strip())
        if end >= len(text):
            break
        start = max(end - overlap, start + 1)
    return [p for p in pieces if p]


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity; 0 when either vector is all zeros."""
    if len(a) != len(b):
        raise DomainError(f"vectors differ in length: {len(a)} and {len(b)}")
    # map/hypot run in C: three times faster than generator sums, and recall scores every archive entry.
    norm = math.hypot(*a) * math.hypot(*b)
    return sum(map(operator.mul, a, b)) / norm if norm else 0.0
