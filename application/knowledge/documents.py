"""Documents of a knowledge base: accepted types, names, sizes and the results of use cases.

A document is plain text or Markdown, UTF-8, at most `DocumentLimits.max_bytes`. It is cut into
overlapping chunks (`domain.knowledge.split_into_chunks`), each chunk is embedded, and the
chunks are stored with their vectors in one transaction. Datasets belong to their owner: another
owner's dataset is "not found", exactly like one that does not exist.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import TYPE_CHECKING

from application.errors import InvalidInput, PayloadTooLarge, UnsupportedMediaType
from domain.text import text_problem

if TYPE_CHECKING:
    from domain.knowledge import Dataset

PLAIN = "text/plain"
MARKDOWN = "text/markdown"
# Accepted media types, with the spellings seen in the wild.
MEDIA_TYPES = {PLAIN: PLAIN, MARKDOWN: MARKDOWN, "text/x-markdown": MARKDOWN}
EXTENSIONS = {".txt": PLAIN, ".text": PLAIN, ".md": MARKDOWN, ".markdown": MARKDOWN}
# Said by clients that do not know the type; the file name decides then.
UNKNOWN_TYPES = {"", "application/octet-stream", "binary/octet-stream"}
MAX_NAME = 255


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
        raise UnsupportedMediaType(
            f"Documents must be text/plain or text/markdown (.txt, .md), not {declared[:100]!r}."
        )
    extension = posixpath.splitext(name.lower())[1]
    if not extension:
        return PLAIN
    if extension in EXTENSIONS:
        return EXTENSIONS[extension]
    raise UnsupportedMediaType(f"Documents must be .txt or .md files (text/plain, text/markdown), not {extension}.")


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
        raise PayloadTooLarge(f"The document is {len(raw)} bytes; the limit is {limits.max_bytes}.")
    try:
        text = raw.decode("utf-8-sig") if isinstance(content, bytes) else content
    except UnicodeDecodeError:
        raise UnsupportedMediaType("The document is not UTF-8 text.") from None
    if "\x00" in text:
        raise UnsupportedMediaType("The document holds binary data, not text.")
    if not text.strip():
        raise InvalidInput("The document is empty.")
    return text, len(raw)
