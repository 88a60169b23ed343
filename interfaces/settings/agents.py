"""MEMAGENT_AGENT__* (the default agent) and MEMAGENT_AGENTS__* (how agents are read)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class AgentSettings(BaseModel):
    """The default agent (app id `default`)."""

    preset_prompt: str = "You are a helpful assistant."
    # The limits are those of an agent's config (domain/agents/config_codec.py).
    dialog_round: int = Field(10, ge=0, le=200)
    history_max_tokens: int = Field(3000, ge=0, le=1_000_000)
    tools: list[str] = ["current_time", "calculator"]
    max_tool_rounds: int = Field(5, ge=0, le=20)
    input_review_keywords: list[str] = []
    output_review_keywords: list[str] = []
    review_response: str = "Sorry, I can't help with that."
    summary_enabled: bool = Field(True, description="keep a rolling summary of each conversation")
    stream_thoughts: bool = Field(
        False, description="mark no answer delta tentative with tools offered (a thought still leaves the answer)"
    )
    language: Literal["en", "zh"] = Field("en", description="language of the platform's rules in the system prompt")
    suggested_questions_after_answer: bool = Field(
        False, description="after each answer, up to 3 follow-up questions (GET /api/messages/{id}/suggested)"
    )
    user_memory: bool = Field(True, description="the end user's facts and other conversations reach the prompt")
    user_scope: Literal["account", "agent"] = Field(
        "account", description="whose user facts: shared by the account's agents, or the agent's own"
    )
    dataset_ids: list[str] = Field(default_factory=list, description="JSON list: datasets the agent searches")
    retrieval_top_k: int = Field(3, ge=1, le=50, description="passages a knowledge-base search returns")
    retrieval_min_score: float = Field(0.0, ge=-1, le=1, description="similarity below which a passage is left out")


class AgentsSettings(BaseModel):
    cache_ttl: float = Field(
        2.0, ge=0, description="seconds an agent read stays in process; another process's change shows within it"
    )
