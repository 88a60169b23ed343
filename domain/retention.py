"""Retention: how long what the service stores is kept, and what a prune removes (docs/ARCHITECTURE.md §5).

Each kind has its own age limit, None keeping it for good:
- *prompt snapshots* (the prompt text kept on each step and message): emptied, the row stays;
- *steps* (the rows of a turn's trace): removed; the message keeps its answer, usage and latency;
- *deleted conversations*: a soft-deleted conversation is removed for good that long after its
  delete, with its messages, steps, memory, event logs and the workflow runs its messages called;
- *model calls* (the cost ledger): removed; the ledger outlives the conversations it names;
- *workflow runs* that no turn called (direct runs: over the API, in the builder): removed with
  their node runs that long after they started (a turn's runs go with its message instead).
The cut-offs are reckoned from a time the caller gives (its clock), never from the system's.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING

from domain.errors import DomainError

if TYPE_CHECKING:
    from datetime import datetime, timedelta


class PruneKind(enum.StrEnum):
    """What a prune removes, in the order it removes it: a conversation's steps go with it, and a
    step that goes whole needs no emptying of its prompt first."""

    DELETED_CONVERSATIONS = "deleted_conversations"
    STEPS = "steps"
    PROMPT_SNAPSHOTS = "prompt_snapshots"
    MODEL_CALLS = "model_calls"
    WORKFLOW_RUNS = "workflow_runs"


@dataclass(frozen=True, slots=True)
class Cutoffs:
    """Rows older than these go (None: that kind is kept for good)."""

    prompt_snapshots: datetime | None
    steps: datetime | None
    deleted_conversations: datetime | None
    model_calls: datetime | None
    workflow_runs: datetime | None = None


@dataclass(frozen=True, slots=True)
class RetentionPolicy:
    prompt_snapshots: timedelta | None
    steps: timedelta | None
    deleted_conversations: timedelta | None
    model_calls: timedelta | None
    workflow_runs: timedelta | None = None

    def __post_init__(self) -> None:
        for kind in fields(self):
            age = getattr(self, kind.name)
            if age is not None and age.total_seconds() <= 0:
                raise DomainError(f"the retention of {kind.name} must be positive (or none: kept for good)")

    def cutoffs(self, now: datetime) -> Cutoffs:
        if now.tzinfo is None:
            raise DomainError("retention cut-offs need a timezone-aware time")

        def before(age: timedelta | None) -> datetime | None:
            return now - age if age is not None else None

        return Cutoffs(
            prompt_snapshots=before(self.prompt_snapshots), steps=before(self.steps),
            deleted_conversations=before(self.deleted_conversations), model_calls=before(self.model_calls),
            workflow_runs=before(self.workflow_runs),
        )


@dataclass(frozen=True, slots=True)
class BatchLimits:
    """Rows per transaction, and the pause between two, so that turns are never starved."""

    size: int = 1000
    pause: float = 0.05  # seconds

    def __post_init__(self) -> None:
        if self.size < 1:
            raise DomainError("a prune batch holds at least one row")
        if self.pause < 0:
            raise DomainError("the pause between prune batches cannot be negative")


@dataclass(frozen=True, slots=True)
class PruneCounts:
    """Rows a prune removed (or, in a dry run, would remove), per kind. A deleted conversation's
    messages, steps, and the workflow runs its messages called with their node runs, are counted
    apart from the steps and the runs that went for their age."""

    deleted_conversations: int = 0
    conversation_messages: int = 0
    conversation_steps: int = 0
    conversation_workflow_runs: int = 0
    conversation_node_runs: int = 0
    steps: int = 0
    prompt_snapshots: int = 0
    model_calls: int = 0
    workflow_runs: int = 0
    node_runs: int = 0

    def as_dict(self) -> dict[str, int]:
        return {kind.name: getattr(self, kind.name) for kind in fields(self)}

    @property
    def total(self) -> int:
        return sum(self.as_dict().values())


@dataclass(frozen=True, slots=True)
class PruneBatch:
    """One transaction of a prune: what it removed, and how long it took."""

    kind: PruneKind
    rows: int
    seconds: float


@dataclass(frozen=True, slots=True)
class PruneReport:
    counts: PruneCounts
    batches: tuple[PruneBatch, ...] = ()
    dry_run: bool = False
    skipped: bool = False  # another worker held the prune lock: this one removed nothing
