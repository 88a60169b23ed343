"""Telling memagent's memory upkeep calls from a turn's own calls at the OpenAI-protocol test server.

Upkeep asks the same model after a turn ends, whenever it gets to it; a test that scripts the
next turn's reply answers upkeep calls aside (`ScriptedLLMServer.answer_aside(is_memory_upkeep)`)
so they never take that reply.
"""

from __future__ import annotations

from typing import Any

from infrastructure.memory.llm_memory_digester import DIGEST_INSTRUCTIONS
from infrastructure.memory.llm_memory_models import (
    ARCHIVE_INSTRUCTIONS,
    EXTRACTION_INSTRUCTIONS,
    SUMMARY_INSTRUCTIONS,
)

UPKEEP_PROMPTS = tuple(
    p[:40] for p in (DIGEST_INSTRUCTIONS, SUMMARY_INSTRUCTIONS, ARCHIVE_INSTRUCTIONS, EXTRACTION_INSTRUCTIONS)
)


def is_memory_upkeep(body: dict[str, Any]) -> bool:
    """The digest, summary, archive and entity calls of memory upkeep, told apart by their system prompts."""
    first = (body.get("messages") or [{}])[0].get("content")
    if isinstance(first, list):  # content parts
        first = "".join(part.get("text", "") for part in first if isinstance(part, dict))
    return isinstance(first, str) and first.startswith(UPKEEP_PROMPTS)
