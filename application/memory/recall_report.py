"""The `long_term_memory_recall` event's observation: what recall put in the prompt, and why."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Sequence

    from domain.agent import AgentConfig
    from domain.memory import MemoryPolicy
    from domain.memory_entities import EntitySheet
    from domain.memory_recall import RecallSelection


@dataclass(frozen=True, slots=True)
class RecallFound:
    """What the tiers gave: the entity sheet, the selection within the budget, how the archive was
    ranked, and the problems of tiers that failed."""

    sheet: EntitySheet
    selection: RecallSelection
    archive_entries: int
    ranking: str
    problems: Sequence[str]


def recall_report(
    found: RecallFound, window_messages: int, config: AgentConfig, policy: MemoryPolicy
) -> dict[str, Any]:
    floor = policy.entity_min_confidence
    report: dict[str, Any] = {
        "short_term_messages": window_messages,
        "short_term": {
            "turns": window_messages // 2,
            "why": f"the last {config.dialog_round} completed turns within {config.history_max_tokens} tokens",
        },
        "entities": [
            {"type": e.type, "value": e.value, "confidence": e.confidence,
             "why": f"current value, confidence >= {floor:g}"}
            for e in found.selection.entities
        ],
        "entities_left_out": [
            {"type": e.type, "value": e.value, "confidence": e.confidence, "why": f"confidence below {floor:g}"}
            for e in found.sheet.below(floor)
        ],
        "intent": None if found.sheet.intent is None else found.sheet.intent.value,
        "summary": found.selection.summary,
        "archive": [
            {"id": r.entry.id, "score": None if r.score is None else round(r.score, 4),
             "source_message_ids": list(r.entry.source_message_ids), "summary": r.entry.summary}
            for r in found.selection.archive
        ],
        "archive_entries": found.archive_entries,
        "archive_ranking": found.ranking,
        "left_out": [f"{d} (over the recall budget of {policy.recall_max_tokens} tokens)"
                     for d in found.selection.dropped],
    }
    if found.problems:
        report["problems"] = list(found.problems)
    return report
