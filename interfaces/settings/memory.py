"""MEMAGENT_MEMORY__*: the memory tiers, their recall and their upkeep."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, model_validator


class MemorySettings(BaseModel):
    backend: Literal["inprocess", "redis"] = "inprocess"
    window_ttl: float = Field(86400.0, gt=0, description="seconds a cached window lives in Redis")
    compact_threshold: int = Field(20, ge=1, description="turns the short-term store holds before a fold")
    compact_batch: int = Field(10, ge=1, description="oldest turns folded into one archive entry")
    archive_top_k: int = Field(3, ge=0, description="archive entries recalled by similarity to the query")
    cross_conversation_top_k: int = Field(
        3, ge=0, le=50, description="archive entries and summaries of the user's other conversations recalled"
    )
    entity_min_confidence: float = Field(0.7, ge=0, le=1, description="entities below it never reach the prompt")
    entity_extraction: Literal["async", "inline"] = "async"
    summary_max_words: int = Field(120, ge=1)
    summary_max_cjk_chars: int = Field(200, ge=1)
    recall_max_tokens: int = Field(1500, ge=0, description="budget of entities, summary and archive in a prompt")
    embedding_cache_ttl: float = Field(30 * 86400.0, gt=0, description="seconds a cached embedding lives")
    embedding_cache_size: int = Field(10_000, ge=1, description="vectors the in-process cache keeps")
    upkeep_lease: float = Field(300.0, gt=0, description="seconds an upkeep holds a conversation's lock at most")
    upkeep_wait: float = Field(300.0, ge=0, description="seconds an upkeep waits for that lock")
    upkeep_every_turns: int = Field(
        6, ge=1, description="finished turns of a conversation one upkeep waits for (1: after every turn)"
    )
    upkeep_token_budget: int = Field(
        1500, ge=0, description="tokens of the waiting turns that make their upkeep due (0: half the window's)"
    )
    upkeep_idle_seconds: float = Field(
        5.0, ge=0, description="seconds of silence after which a conversation's waiting turns are upkept"
    )

    @model_validator(mode="after")
    def _batch_within_threshold(self) -> MemorySettings:
        if self.compact_batch > self.compact_threshold:
            raise ValueError("compact_batch cannot exceed compact_threshold")
        return self
