"""MEMAGENT_RETENTION__*: how long what is stored is kept, and the prune that removes the rest."""

from __future__ import annotations

from pydantic import BaseModel, Field


class RetentionSettings(BaseModel):
    """How many days what is stored is kept (0: for good), and the prune that removes the rest
    (`memagent prune`, and every `interval` in one worker at a time). Event logs are kept
    MEMAGENT_EVENTS__RETENTION seconds after their turn, as before."""

    prompt_days: float = Field(30.0, ge=0, description="a step's or message's prompt snapshot is emptied")
    step_days: float = Field(90.0, ge=0, description="a turn's steps are removed; its message stays")
    deleted_conversation_days: float = Field(
        30.0, ge=0, description="after its delete, a conversation goes for good: messages, steps, memory, event logs"
    )
    model_call_days: float = Field(400.0, ge=0, description="rows of the model-call ledger are removed")
    workflow_run_days: float = Field(
        90.0, ge=0, description="after its start, a direct workflow run (no turn called it) goes with its node runs"
    )
    interval: float = Field(3600.0, ge=0, description="seconds between scheduled prunes; 0: only `memagent prune`")
    batch_size: int = Field(1000, ge=1, le=100_000, description="rows removed per transaction")
    batch_pause: float = Field(0.05, ge=0, description="seconds between two batches, so that turns are not starved")
