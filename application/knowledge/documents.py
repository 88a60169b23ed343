"""Documents of a knowledge base: accepted types, names, sizes and the results of use cases.

A document is plain text or Markdown, UTF-8, at most `DocumentLimits.max_bytes`. It is cut into
overlapping chunks (`domain.knowledge.datasets.split_into_chunks`), each chunk is embedded, and the
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
    from domain.knowledge.datasets import Dataset

PLAIN = "text/plain"
MARKDOWN = "text/markdown"
# Accepted media types, with the spellings seen in the wild.
MEDIA_TYPES = {PLAIN: PLAIN, MARKDOWN: MARKDOWN, "text/x-markdown": MARKDOWN}
EXTENSIONS = {".txt": PLAIN, ".text": PLAIN, ".md": MARKDOWN, ".markdown": MARKDOWN}
# Said by clients that do not know the type; the file name decides then.
UNKNOWN_TYPES = {"", "application/octet-stream", "binary/octet-stream"}
MAX_NAME = 255

# The names `document_name` and `document_type` accept, as a regular expression (for the API's
# schema): any folder, then a printable name that is not only white space, with no extension or a
# text one (an extension after leading dots only, as `.bashrc`, is none).
_CONTROL = r"\x00-\x1f\x7f"
# White space as `str.isspace` (and `str.strip`) has it, for a regular expression's character class:
# `\s` differs between Python and ECMA-262 (U+0085, U+FEFF), the dialect of JSON Schema.
WHITE_SPACE = r"\t-\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
_PRINTABLE_SPACE = r" \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"


def any_case(word: str) -> str:
    """A regular expression of `word` in any case (`[tT][xX][tT]`), without flags JSON Schema lacks."""
    return "".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else c for c in word)


_TEXT_EXTENSION = "(?:" + "|".join(any_case(e[1:]) for e in EXTENSIONS) + ")"
_SOLID, _ANY = rf"[^{WHITE_SPACE}{_CONTROL}/\\", rf"[^{_CONTROL}/\\"  # classes, to be closed
_NO_EXTENSION = rf"(?:\.+|{_SOLID}.])(?:{_ANY}.]*{_SOLID}.])?"
_WITH_EXTENSION = rf"(?:{_SOLID}]{_ANY}]*)?\.{_TEXT_EXTENSION}"
_SPACE = rf"[{_PRINTABLE_SPACE}]*"
NAME_PATTERN = (
    rf"^(?:[^{_CONTROL}]*[/\\])?{_SPACE}(?:{_NO_EXTENSION}|{_WITH_EXTENSION}){_SPACE}$"
)


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


def document_type(name: str, media_type: str | None) -> str:
    """`text/plain` or `text/markdown`: the media type a client sent, else the name's. The name and
    the type are checked alike: `x.sh` is refused whatever type it is sent as."""
    extension = posixpath.splitext(name.lower())[1]
    if extension and extension not in EXTENSIONS:
        raise UnsupportedMediaType(
            f"Documents must be .txt or .md files (text/plain, text/markdown), not {extension[:100]}."
        )
    declared = (media_type or "").split(";")[0].strip().lower()
    if declared in MEDIA_TYPES:
        return MEDIA_TYPES[declared]
    if declared not in UNKNOWN_TYPES:
        raise UnsupportedMediaType(
            f"Documents must be text/plain or text/markdown (.txt, .md), not {declared[:100]!r}."
        )
    return EXTENSIONS.get(extension, PLAIN)


def document_name(name: str) -> str:
    """The file's own name, without any folder a client sent along; printable (no CR, LF or other
    control character, which would let a name forge a line of a log or a header)."""
    base = posixpath.basename(name.replace("\\", "/")).strip()
    if not base or len(base) > MAX_NAME:
        raise InvalidInput(f"A document needs a name of 1 to {MAX_NAME} characters.")
    problem = text_problem(base) or _control_in(name)
    if problem:
        raise InvalidInput(f"The document's name: {problem}.")
    return base


def _control_in(name: str) -> str:
    bad = next((c for c in name if ord(c) < 0x20 or ord(c) == 0x7F), None)
    return "" if bad is None else f"no control character (U+{ord(bad):04X}) is allowed"


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
