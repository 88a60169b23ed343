"""Recall: what reaches the system prompt, in priority order, within a token budget."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

    from domain.memory.archive import RankedEntry
    from domain.memory.entities import Entity
    from domain.memory.user_facts import ScoredItem
    from domain.memory.window import TokenCounter


@dataclass(frozen=True, slots=True)
class RecallSelection:
    entities: tuple[Entity, ...]
    summary: str
    archive: tuple[RankedEntry, ...]
    dropped: tuple[str, ...]  # what did not fit, e.g. "archive arc_…", "entity city"
    earlier: tuple[ScoredItem, ...] = ()


def earlier_line(scored: ScoredItem) -> str:
    """An item of another conversation as the prompt cites it."""
    return f"(conversation {scored.item.conversation_id}) {scored.item.text}"


def entity_line(entity: Entity) -> str:
    return f"- {entity.type}: {entity.value}"


def select_recall(
    entities: Sequence[Entity],
    summary: str,
    archive: Sequence[RankedEntry],
    budget: int,
    count: TokenCounter,
    earlier: Sequence[ScoredItem] = (),
) -> RecallSelection:
    """Fill the memory part of the system prompt in priority order: entities, the summary,
    archive entries by score, then items of the user's other conversations by score. Whatever
    does not fit the budget is left out (and named)."""
    left, dropped = budget, []
    kept_entities: list[Entity] = []
    for entity in sorted(entities, key=lambda e: (-e.confidence, -e.updated_at.timestamp())):
        cost = count(entity_line(entity))
        if cost <= left:
            kept_entities.append(entity)
            left -= cost
        else:
            dropped.append(f"entity {entity.type}")
    kept_summary = ""
    if summary.strip():
        cost = count(summary)
        if cost <= left:
            kept_summary, left = summary, left - cost
        else:
            dropped.append("summary")
    kept_archive: list[RankedEntry] = []
    for ranked in archive:
        cost = count(ranked.entry.summary)
        if cost <= left:
            kept_archive.append(ranked)
            left -= cost
        else:
            dropped.append(f"archive {ranked.entry.id}")
    kept_earlier: list[ScoredItem] = []
    for scored in earlier:
        cost = count(earlier_line(scored))
        if cost <= left:
            kept_earlier.append(scored)
            left -= cost
        else:
            dropped.append(f"{scored.item.kind} {scored.item.id} of conversation {scored.item.conversation_id}")
    by_type = tuple(sorted(kept_entities, key=lambda e: e.type))
    return RecallSelection(by_type, kept_summary, tuple(kept_archive), tuple(dropped), tuple(kept_earlier))
