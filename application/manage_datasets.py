"""Knowledge bases: create a dataset, add a text document to it, describe it.

A document is plain text or Markdown, UTF-8, at most `DocumentLimits.max_bytes`. It is cut into
overlapping chunks (`domain.knowledge.split_into_chunks`), each chunk is embedded, and the
chunks are stored with their vectors in one transaction. Datasets belong to their owner: another
owner's dataset is "not found", exactly like one that does not exist.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from application.errors import InvalidInput, NotFound
from application.ports.dataset_inventory import DatasetInventory
from application.ports.embedder import Embedder
from application.ports.knowledge_base import KnowledgeBase
from application.ports.runtime import Clock, IdGenerator
from domain.errors import DomainError
from domain.ids import OwnerId
from domain.knowledge import Chunk, Dataset, split_into_chunks
from domain.text import text_problem

PLAIN = "text/plain"
MARKDOWN = "text/markdown"
# Accepted media types, with the spellings seen in the wild.
MEDIA_TYPES = {PLAIN: PLAIN, MARKDOWN: MARKDOWN, "text/x-markdown": MARKDOWN}
EXTENSIONS = {".txt": PLAIN, ".text": PLAIN, ".md": MARKDOWN, ".markdown": MARKDOWN}
# Said by clients that do not know the type; the file name decides then.
UNKNOWN_TYPES = {"", "application/octet-stream", "binary/octet-stream"}
MAX_NAME = 255


class DocumentTooLarge(InvalidInput):
    code = "payload_too_large"


class UnsupportedDocumentType(InvalidInput):
    code = "unsupported_media_type"


@dataclass(frozen=True, slots=True)
class DocumentLimits:
    max_bytes: int = 1024 * 1024
    chunk_size: int = 800
    chunk_overlap: int = 100

    def __post_init__(self) -> None:
        if self.max_bytes < 1 or self.chunk_size < 1 or not 0 <= self.chunk_overlap < self.chunk_size:
            raise ValueError("max_bytes and chunk_size must be positive, chunk_overlap within 0..chunk_size-1")


@dataclass(frozen=True, slots=True)
class DatasetSummary:
    dataset: Dataset
    documents: int
    chunks: int


@dataclass(frozen=True, slots=True)
class AddedDocument:
    id: str
    dataset_id: str
    name: str
    media_type: str
    size: int  # bytes of UTF-8 text
    chunks: int


def document_type(name: str, media_type: str | None) -> str:
    """`text/plain` or `text/markdown`, from the media type a client sent, else from the name."""
    declared = (media_type or "").split(";")[0].strip().lower()
    if declared in MEDIA_TYPES:
        return MEDIA_TYPES[declared]
    if declared not in UNKNOWN_TYPES:
        raise UnsupportedDocumentType(
            f"Documents must be text/plain or text/markdown (.txt, .md), not {declared[:100]!r}."
        )
    extension = posixpath.splitext(name.lower())[1]
    if not extension:
        return PLAIN
    if extension in EXTENSIONS:
        return EXTENSIONS[extension]
    raise UnsupportedDocumentType(f"Documents must be .txt or .md files (text/plain, text/markdown), not {extension}.")


def document_name(name: str) -> str:
    """The file's own name, without any folder a client sent along."""
    base = posixpath.basename(name.replace("\\", "/")).strip()
    if not base or len(base) > MAX_NAME:
        raise InvalidInput(f"A document needs a name of 1 to {MAX_NAME} characters.")
    problem = text_problem(base)
    if problem:
        raise InvalidInput(f"The document's name: {problem}.")
    return base


def document_text(content: bytes | str, limits: DocumentLimits) -> tuple[str, int]:
    """The text and its size in UTF-8 bytes; refuses what is too large, not text, or empty."""
    raw = content.encode("utf-8") if isinstance(content, str) else content
    if len(raw) > limits.max_bytes:
        raise DocumentTooLarge(f"The document is {len(raw)} bytes; the limit is {limits.max_bytes}.")
    try:
        text = raw.decode("utf-8-sig") if isinstance(content, bytes) else content
    except UnicodeDecodeError:
        raise UnsupportedDocumentType("The document is not UTF-8 text.") from None
    if "\x00" in text:
        raise UnsupportedDocumentType("The document holds binary data, not text.")
    if not text.strip():
        raise InvalidInput("The document is empty.")
    return text, len(raw)


class CreateDataset:
    def __init__(self, knowledge: KnowledgeBase, clock: Clock, ids: IdGenerator) -> None:
        self._knowledge = knowledge
        self._clock = clock
        self._ids = ids

    async def __call__(self, owner: OwnerId, name: str) -> Dataset:
        try:
            dataset = Dataset(id=self._ids.new_id(), owner=owner, name=name.strip(), created_at=self._clock.now())
        except DomainError as broken:
            raise InvalidInput(str(broken)) from broken
        await self._knowledge.add_dataset(dataset)
        return dataset


class AddDocument:
    def __init__(
        self, knowledge: KnowledgeBase, embedder: Embedder, ids: IdGenerator, limits: DocumentLimits
    ) -> None:
        self._knowledge = knowledge
        self._embedder = embedder
        self._ids = ids
        self._limits = limits

    @property
    def limits(self) -> DocumentLimits:
        return self._limits

    async def __call__(
        self, owner: OwnerId, dataset_id: str, name: str, content: bytes | str, media_type: str | None = None
    ) -> AddedDocument:
        """Checks everything before it embeds anything: a refused document costs nothing."""
        if await self._knowledge.get_dataset(dataset_id, owner) is None:
            raise NotFound(f"Dataset {dataset_id!r} was not found.")
        name = document_name(name)
        kind = document_type(name, media_type)
        text, size = document_text(content, self._limits)
        pieces = split_into_chunks(text, self._limits.chunk_size, self._limits.chunk_overlap)
        if not pieces:
            raise InvalidInput("The document is empty.")
        vectors = await self._embedder.embed(pieces)
        document_id = self._ids.new_id()
        chunks = [
            Chunk(self._ids.new_id(), dataset_id, document_id, name, position, piece)
            for position, piece in enumerate(pieces)
        ]
        await self._knowledge.add_chunks(chunks, vectors)
        return AddedDocument(document_id, dataset_id, name, kind, size, len(chunks))


class DescribeDataset:
    def __init__(self, knowledge: KnowledgeBase, inventory: DatasetInventory) -> None:
        self._knowledge = knowledge
        self._inventory = inventory

    async def __call__(self, owner: OwnerId, dataset_id: str) -> DatasetSummary:
        dataset = await self._knowledge.get_dataset(dataset_id, owner)
        if dataset is None:
            raise NotFound(f"Dataset {dataset_id!r} was not found.")
        counts = await self._inventory.counts(dataset_id)
        return DatasetSummary(dataset, counts.documents, counts.chunks)
