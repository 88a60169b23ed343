"""Model calls in the operator's metrics, by why they were made and how they ended.

The labels follow `application.ports.metrics`: bounded values only. Recording never fails and never waits.
"""

from enum import StrEnum
from typing import Protocol

from domain.conversations.messages import Usage


class ModelPurpose(StrEnum):
    """Why a model was called."""

    CHAT = "chat"  # a turn's own calls
    SUMMARY = "summary"  # the rolling summary and archive entries of memory upkeep
    ENTITIES = "entities"  # entity extraction
    TITLE = "title"  # a conversation's title
    FOLLOW_UPS = "follow_ups"  # the questions suggested after an answer
    EMBEDDINGS = "embeddings"  # vectors of an embedding model
    WORKFLOW = "workflow"  # a workflow's `llm` nodes (application/workflows/nodes/llm.py)


class ModelOutcome(StrEnum):
    OK = "ok"
    ERROR = "error"  # the model failed
    CANCELLED = "cancelled"  # the caller stopped reading: a stop, a timeout, a shutdown


class ModelMetrics(Protocol):
    def model_call(self, purpose: ModelPurpose, profile: str, outcome: ModelOutcome, usage: Usage | None) -> None:
        """A model call ended; `usage` is what it consumed (None: unknown, e.g. an embedding call)."""
        ...
