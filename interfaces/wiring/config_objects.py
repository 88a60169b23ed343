"""Domain objects made from the settings the container holds (plain dicts, see interfaces/settings/settings.py)."""

from __future__ import annotations

from domain.agents.config import AgentConfig
from domain.agents.review import KeywordReview
from domain.ids import AppId
from domain.memory.summary import SummaryLimit
from domain.memory.user_facts import UserScope
from domain.memory.window import MemoryPolicy


def default_agent(agent: dict) -> AgentConfig:  # type: ignore[type-arg]
    review = agent["review_response"]
    return AgentConfig(
        app_id=AppId("default"),
        preset_prompt=agent["preset_prompt"],
        dialog_round=agent["dialog_round"],
        history_max_tokens=agent["history_max_tokens"],
        tool_names=tuple(agent["tools"]),
        max_tool_rounds=agent["max_tool_rounds"],
        input_review=KeywordReview(tuple(agent["input_review_keywords"]), review),
        output_review=KeywordReview(tuple(agent["output_review_keywords"]), review),
        dataset_ids=tuple(agent.get("dataset_ids") or ()),
        retrieval_top_k=agent.get("retrieval_top_k", 3),
        retrieval_min_score=agent.get("retrieval_min_score", 0.0),
        summary_enabled=agent.get("summary_enabled", True),
        stream_thoughts=agent.get("stream_thoughts", False),
        language=agent.get("language", "en"),
        suggested_questions_after_answer=agent.get("suggested_questions_after_answer", False),
        user_memory=agent.get("user_memory", True),
        user_scope=UserScope(agent.get("user_scope", UserScope.ACCOUNT.value)),
    )


def memory_policy_of(memory: dict) -> MemoryPolicy:  # type: ignore[type-arg]
    return MemoryPolicy(
        compact_threshold=memory["compact_threshold"],
        compact_batch=memory["compact_batch"],
        archive_top_k=memory["archive_top_k"],
        cross_conversation_top_k=memory["cross_conversation_top_k"],
        entity_min_confidence=memory["entity_min_confidence"],
        summary=SummaryLimit(memory["summary_max_words"], memory["summary_max_cjk_chars"]),
        recall_max_tokens=memory["recall_max_tokens"],
        inline_entities=memory["entity_extraction"] == "inline",
    )
