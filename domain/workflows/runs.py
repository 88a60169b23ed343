"""A workflow's runs and each node's run in them (docs/workflows.md).

A `WorkflowRun` starts `running` and finishes once, in one of the other statuses; a `NodeRun` is
written once its node is done (or known never to run: `skipped`), so it is born finished. Both are
owned as a conversation is: by an account (`owner`) and, under it, an end user.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from domain.errors import DomainError

if TYPE_CHECKING:
    from collections.abc import Mapping
    from datetime import datetime

    from domain.ids import EndUserId, MessageId, OwnerId, ThoughtId
    from domain.workflows.graph import NodeType


def _empty() -> Mapping[str, Any]:
    return MappingProxyType({})


class RunStatus(enum.StrEnum):
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"  # a node failed with `on_error: fail`, or a node without `on_error` failed
    STOPPED = "stopped"  # cancelled: its parent turn stopped, or its caller went away
    TIMEOUT = "timeout"  # it ran past MEMAGENT_WORKFLOWS__TIMEOUT


class NodeStatus(enum.StrEnum):
    SUCCEEDED = "succeeded"  # an `on_error: default` or `branch` node that failed is `failed`, not this
    FAILED = "failed"
    SKIPPED = "skipped"  # only reachable through branches that were not taken
    STOPPED = "stopped"  # running when the run stopped, timed out, or failed on another node


@dataclass(frozen=True, slots=True)
class Spent:
    """Tokens and price of a node's model calls, or of a run's, added up."""

    tokens: int = 0
    price: float = 0.0

    def __post_init__(self) -> None:
        if self.tokens < 0 or self.price < 0:
            raise DomainError("tokens and price cannot be negative")

    def __add__(self, other: Spent) -> Spent:
        return Spent(self.tokens + other.tokens, self.price + other.price)


@dataclass(frozen=True, slots=True)
class WorkflowRun:
    """`version` None: the workflow's draft ran. `parent_message_id`/`parent_step_id`: the turn and
    the step (thought) whose tool call ran it, if one did. `depth`: 1 for a run nobody's workflow
    started, one more for each workflow it runs inside."""

    id: str
    owner: OwnerId
    end_user: EndUserId
    workflow_id: str
    version: int | None
    inputs: Mapping[str, Any]
    started_at: datetime
    status: RunStatus = RunStatus.RUNNING
    outputs: Mapping[str, Any] = field(default_factory=_empty)
    error: str | None = None
    spent: Spent = field(default_factory=Spent)
    latency: float = 0.0
    finished_at: datetime | None = None
    parent_message_id: MessageId | None = None
    parent_step_id: ThoughtId | None = None
    depth: int = 1

    def __post_init__(self) -> None:
        if self.depth < 1:
            raise DomainError("a run's depth starts at 1")
        if (self.status is RunStatus.RUNNING) != (self.finished_at is None):
            raise DomainError("a run has a finish time exactly when it is no longer running")

    @property
    def is_finished(self) -> bool:
        return self.status is not RunStatus.RUNNING

    def finish(
        self, status: RunStatus, at: datetime, *, outputs: Mapping[str, Any] | None = None,
        error: str | None = None, spent: Spent | None = None,
    ) -> WorkflowRun:
        """The run ended: once only, never back to `running`; only a success has outputs, and
        every other end says why in `error`."""
        if self.is_finished:
            raise DomainError(f"run {self.id} already finished ({self.status})")
        if status is RunStatus.RUNNING:
            raise DomainError("a run cannot finish as running")
        if status is RunStatus.SUCCEEDED and error is not None:
            raise DomainError("a run that succeeded has no error")
        if status is not RunStatus.SUCCEEDED and not error:
            raise DomainError(f"a run that ends {status} says why")
        return replace(
            self, status=status, finished_at=at, outputs=outputs if status is RunStatus.SUCCEEDED and outputs else {},
            error=error, spent=spent or self.spent, latency=max((at - self.started_at).total_seconds(), 0.0),
        )

    def visible_to(self, owner: str, end_user: str | None) -> bool:
        """`end_user` None: the whole account sees it."""
        return self.owner == owner and (end_user is None or self.end_user == end_user)


@dataclass(frozen=True, slots=True)
class NodeRun:
    """One node's run, finished. `attempt`: the try that decided it (1 + the retries it took); 0 for
    a node that never ran (`skipped`). `inputs`: what the node resolved from its templates (a
    rendered prompt, a tool's arguments, a request), so a trace shows what it was given."""

    run_id: str
    node_id: str
    node_type: NodeType
    status: NodeStatus
    started_at: datetime
    finished_at: datetime
    inputs: Mapping[str, Any] = field(default_factory=_empty)
    outputs: Mapping[str, Any] = field(default_factory=_empty)
    error: str | None = None
    attempt: int = 1
    spent: Spent = field(default_factory=Spent)
    latency: float = 0.0

    def __post_init__(self) -> None:
        if self.finished_at < self.started_at:
            raise DomainError("a node run cannot finish before it started")
        if (self.status is NodeStatus.SKIPPED) != (self.attempt == 0):
            raise DomainError("a skipped node never ran (attempt 0); any other ran at least once")
        if self.status in (NodeStatus.FAILED, NodeStatus.STOPPED) and not self.error:
            raise DomainError(f"a node run that ended {self.status} says why")

    @classmethod
    def skipped(cls, run_id: str, node_id: str, node_type: NodeType, at: datetime) -> NodeRun:
        return cls(run_id, node_id, node_type, NodeStatus.SKIPPED, at, at, attempt=0)
