"""Scoring of tests/bench/user_memory.py: where a question's fact is in the system prompt, superseded
values shown as current, prompt tokens against the full history, and why a question missed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select

from domain.agents.prompt import EARLIER_HEADER, ENTITIES_HEADER
from domain.ids import ConversationId
from domain.memory.user_facts import FactHolder
from infrastructure.persistence.memory_rows import MemoryItemRow
from interfaces.wiring.container import Container
from tests.bench.user_memory_load import OWNER, USER
from tests.bench.user_memory_plan import FACTS, Fact


@dataclass(frozen=True)
class Asked:
    fact: Fact
    conversation: ConversationId
    system: str  # the system prompt the model got
    prompt_tokens: int = 0
    full_history: int = 0


def section(system: str, header: str) -> str:
    return next((part for part in system.split("\n\n") if part.startswith(header)), "")


def where(fact: Fact, system: str) -> str | None:
    wanted = fact.latest.casefold()
    for name, header in (("facts", ENTITIES_HEADER), ("earlier", EARLIER_HEADER)):
        if wanted in section(system, header).casefold():
            return name
    return "elsewhere" if wanted in system.casefold() else None


def _superseded(fact: Fact) -> str:
    """The value a correction replaced, when the new one does not contain it."""
    return fact.value if fact.corrected and fact.value.casefold() not in fact.corrected.casefold() else ""


GROUPS: dict[str, Callable[[Fact], bool]] = {
    "facts_route": lambda f: f.route == "facts", "recall_route": lambda f: f.route == "recall",
    "paraphrased": lambda f: f.paraphrased, "direct": lambda f: not f.paraphrased,
    "chinese": lambda f: f.chinese, "corrected": lambda f: bool(f.corrected),
}


def stale_values(system: str) -> list[str]:
    """The corrected facts whose superseded value the facts section shows, as if current."""
    shown = section(system, ENTITIES_HEADER).casefold()
    return [f.key for f in FACTS if (old := _superseded(f)) and old.casefold() in shown]


def score(outcomes: list[Asked]) -> dict[str, Any]:
    found = {a.fact.key: where(a.fact, a.system) for a in outcomes}
    stale = {a.fact.key: stale_values(a.system) for a in outcomes}
    latest, stale_questions = sum(1 for v in found.values() if v), sum(1 for v in stale.values() if v)
    by_group = {}
    for name, test in GROUPS.items():
        asked = [a.fact.key for a in outcomes if test(a.fact)]
        by_group[name] = f"{sum(1 for key in asked if found[key])}/{len(asked)}"
    return {
        "questions": len(outcomes), "latest": latest, "latest_share": round(latest / len(outcomes), 4),
        "missed": sorted(k for k, v in found.items() if not v),
        "found_in": {name: sum(1 for v in found.values() if v == name) for name in ("facts", "earlier", "elsewhere")},
        "by_group": by_group,
        "stale": stale_questions, "stale_share": round(stale_questions / len(outcomes), 4),
        "stale_values": sorted({key for v in stale.values() for key in v}),
        "superseded_in_earlier": sorted(a.fact.key for a in outcomes if (old := _superseded(a.fact))
                                        and old.casefold() in section(a.system, EARLIER_HEADER).casefold()),
    }


def tokens(outcomes: list[Asked]) -> dict[str, Any]:
    ours, full = sum(a.prompt_tokens for a in outcomes), sum(a.full_history for a in outcomes)
    savings = [1 - a.prompt_tokens / a.full_history for a in outcomes]
    return {
        "memagent_total": ours, "full_history_total": full, "saving": round(1 - ours / full, 4),
        "memagent_per_question": [min(a.prompt_tokens for a in outcomes), max(a.prompt_tokens for a in outcomes)],
        "full_history_first_last": [outcomes[0].full_history, outcomes[-1].full_history],
        "saving_min": round(min(savings), 4),
    }


async def _items_holding(container: Container, value: str, exclude: ConversationId) -> list[tuple[str, str]]:
    """(id, kind) of the user's items (of the other conversations) whose text holds `value`: read straight."""
    i = MemoryItemRow
    statement = select(i.id, i.kind, i.text).where(i.owner == OWNER, i.end_user == USER, i.conversation_id != exclude)
    async with container.database().transaction("bench: items holding a value") as session:
        rows = (await session.execute(statement)).all()
    return [(row.id, row.kind) for row in rows if value.casefold() in row.text.casefold()]


async def diagnose(container: Container, outcomes: list[Asked]) -> list[dict[str, Any]]:
    """Why each missed question missed: no user fact and no item of another conversation holds the
    value (extraction), items hold it but rank below the top k (ranking: by the recall index's own
    ranking of every item, those of score 0 or less left out as it leaves them out), or it ranked in
    the top k and was left out of the prompt (budget)."""
    memory, holder, misses = container.memory, FactHolder(OWNER, USER), []
    embedder, top_k = memory.memory_embedder(), memory.policy().cross_conversation_top_k
    facts = await memory.record().user_facts(holder)
    for a in (a for a in outcomes if where(a.fact, a.system) is None):
        [vector] = await embedder.embed([a.fact.question])
        ranked = await memory.recall_index().similar(holder, embedder.name, vector, 1_000_000, a.conversation)
        rank = {s.item.id: (place, s.score) for place, s in enumerate(ranked, start=1)}
        holding = await _items_holding(container, a.fact.latest, a.conversation)
        in_facts = [e.type for e in facts.current if a.fact.latest.casefold() in e.value.casefold()]
        places = sorted(rank[item][0] for item, _ in holding if item in rank)
        if not holding and not in_facts:
            why = "extraction: no user fact, summary or archive entry of another conversation holds it"
        elif holding and (not places or places[0] > top_k):
            best = f"ranks #{places[0]} of {len(ranked)}" if places else "scores 0 or less (left out of the ranking)"
            why = f"ranking: the best of the {len(holding)} items holding it {best}"
        else:
            why = "budget: held by a user fact or a top item, yet left out of the prompt"
        misses.append({
            "fact": a.fact.key, "question": a.fact.question, "value": a.fact.latest, "why": why,
            "user_facts_holding": in_facts,
            "items_holding": [{"kind": kind, "rank": rank.get(item, (None, 0.0))[0],
                               "score": round(rank.get(item, (None, 0.0))[1], 4)} for item, kind in holding],
            "top_k": [{"score": round(s.score, 4), "text": s.item.text[:80]} for s in ranked[:top_k]],
        })
    return misses
