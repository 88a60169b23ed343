"""The `long_term_memory_recall` event's observation: what recall put in the prompt, from where,
and why; and what it left out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Sequence

    from application.memory.user_recall import UserRecalled
    from domain.agents.config import AgentConfig
    from domain.memory.entities import Entity, EntitySheet
    from domain.memory.recall import RecallSelection
    from domain.memory.window import MemoryPolicy


@dataclass(frozen=True, slots=True)
class RecallFound:
    """What the tiers gave: the entity sheet, the selection within the budget, how the archive was
    ranked, the problems of tiers that failed, and the user's memory."""

    sheet: EntitySheet
    selection: RecallSelection
    archive_entries: int
    ranking: str
    problems: Sequence[str]
    user: UserRecalled
    embedder: str = ""


def _entity(entity: Entity, why: str, user_facts: set[int]) -> dict[str, Any]:
    source = "user facts" if id(entity) in user_facts else "conversation"
    return {"type": entity.type, "value": entity.value, "confidence": entity.confidence, "from": source, "why": why}


def _entities(found: RecallFound, floor: float) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    facts = found.user.facts
    user_ids = {id(e) for e in facts.current}
    kept = [_entity(e, f"current value, confidence >= {floor:g}", user_ids) for e in found.selection.entities]
    left_out = [_entity(e, f"confidence below {floor:g}", user_ids) for e in (*found.sheet.below(floor),
                                                                              *facts.below(floor))]
    conversation_types = {e.type for e in found.sheet.for_prompt(floor)}
    left_out.extend(
        _entity(e, "the conversation's own value of this type wins", user_ids)
        for e in facts.for_prompt(floor) if e.type in conversation_types
    )
    return kept, left_out


def _earlier(found: RecallFound, policy: MemoryPolicy) -> dict[str, Any]:
    user = found.user
    if user.holder is None:
        return {"earlier_conversations": [], "user_memory": "off for this agent"}
    whose = "this agent's" if user.holder.agent_id else "the account's agents'"
    return {
        "user_memory": f"the end user's facts and other conversations, shared by {whose} conversations",
        "earlier_conversations": [
            {"id": s.item.id, "kind": s.item.kind.value, "conversation_id": s.item.conversation_id,
             "source_message_ids": list(s.item.source_message_ids), "score": round(s.score, 4), "text": s.item.text}
            for s in found.selection.earlier
        ],
        "earlier_ranking": f"top {policy.cross_conversation_top_k} archive entries and summaries of the user's "
                           f"other conversations by cosine similarity to the query ({found.embedder})",
    }


def recall_report(
    found: RecallFound, window_messages: int, config: AgentConfig, policy: MemoryPolicy
) -> dict[str, Any]:
    entities, left_out_entities = _entities(found, policy.entity_min_confidence)
    report: dict[str, Any] = {
        "short_term_messages": window_messages,
        "short_term": {
            "turns": window_messages // 2,
            "why": f"the last {config.dialog_round} completed turns within {config.history_max_tokens} tokens",
        },
        "entities": entities,
        "entities_left_out": left_out_entities,
        "intent": None if found.sheet.intent is None else found.sheet.intent.value,
        "summary": found.selection.summary,
        "archive": [
            {"id": r.entry.id, "score": None if r.score is None else round(r.score, 4),
             "source_message_ids": list(r.entry.source_message_ids), "summary": r.entry.summary}
            for r in found.selection.archive
        ],
        "archive_entries": found.archive_entries,
        "archive_ranking": found.ranking,
        **_earlier(found, policy),
        "left_out": [f"{d} (over the recall budget of {policy.recall_max_tokens} tokens)"
                     for d in found.selection.dropped],
    }
    if found.problems:
        report["problems"] = list(found.problems)
    return report
