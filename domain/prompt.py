"""Prompt assembly: system prompt → history pairs → the current user message."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from domain.memory import check_history
from domain.memory_recall import entity_line
from domain.messages import Block, ImageBlock, Msg, Role, TextBlock

if TYPE_CHECKING:
    from collections.abc import Sequence
    from datetime import datetime

    from domain.agent import AgentConfig
    from domain.memory_entities import Entity

PLATFORM_RULES = (
    "Answer the user's latest message. Use the conversation memory below when it is "
    "relevant, and say so plainly when you do not know something."
)


SUMMARY_HEADER = "Summary of the conversation so far:"
ARCHIVE_HEADER = "Earlier parts of the conversation:"
ENTITIES_HEADER = "Known facts about the user (their latest values, which override anything earlier above):"


@dataclass(frozen=True, slots=True)
class PromptMemory:
    """What long-term and entity memory contribute to one turn's system prompt."""

    summary: str = ""
    archive: tuple[str, ...] = ()
    entities: tuple[Entity, ...] = ()


def system_text(config: AgentConfig, memory: PromptMemory) -> str:
    parts = [PLATFORM_RULES, config.preset_prompt.strip()]
    if memory.summary.strip():
        parts.append(f"{SUMMARY_HEADER}\n" + memory.summary.strip())
    if memory.archive:
        parts.append(f"{ARCHIVE_HEADER}\n" + "\n".join(f"- {a}" for a in memory.archive))
    if memory.entities:
        parts.append(f"{ENTITIES_HEADER}\n" + "\n".join(entity_line(e) for e in memory.entities))
    return "\n\n".join(p for p in parts if p)


def assemble_prompt(
    config: AgentConfig,
    memory: PromptMemory,
    history: Sequence[Msg],
    query: str,
    image_urls: Sequence[str],
    *,
    accepts_images: bool,
    message_id: str,
    at: datetime,
) -> list[Msg]:
    """The messages sent to the model for the first step of a turn."""
    check_history(history)
    system = Msg(f"{message_id}:system", "system", Role.SYSTEM, (TextBlock(system_text(config, memory)),), at)
    blocks: list[Block] = [TextBlock(query)]
    if accepts_images:
        blocks.extend(ImageBlock(url) for url in image_urls)
    user = Msg(f"{message_id}:query", "user", Role.USER, tuple(blocks), at)
    return [system, *history, user]
