"""What a running workflow tells the world as it goes: the frames of its SSE stream, and the events a
chat turn forwards into its own stream when one of its tools is a workflow.

Every name has `workflow` or `node` in it, so a chat client can tell them from the turn's own.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping

    from domain.workflows.runs import NodeRun, WorkflowRun


class WorkflowEventKind(enum.StrEnum):
    WORKFLOW_STARTED = "workflow_started"
    NODE_STARTED = "node_started"
    NODE_FINISHED = "node_finished"  # a skipped node has only this one
    WORKFLOW_FINISHED = "workflow_finished"


@dataclass(frozen=True, slots=True)
class WorkflowEvent:
    kind: WorkflowEventKind
    run_id: str
    data: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def to_dict(self) -> dict[str, Any]:
        """The event's JSON body: `event`, `workflow_run_id`, then the kind's own fields."""
        return {"event": self.kind.value, "workflow_run_id": self.run_id, **self.data}

    @classmethod
    def started(cls, run: WorkflowRun) -> WorkflowEvent:
        return cls(WorkflowEventKind.WORKFLOW_STARTED, run.id, {
            "workflow_id": run.workflow_id, "version": run.version, "inputs": dict(run.inputs), "depth": run.depth,
        })

    @classmethod
    def node_started(cls, run_id: str, node_id: str, node_type: str) -> WorkflowEvent:
        return cls(WorkflowEventKind.NODE_STARTED, run_id, {"node_id": node_id, "node_type": node_type})

    @classmethod
    def node_finished(cls, node: NodeRun) -> WorkflowEvent:
        return cls(WorkflowEventKind.NODE_FINISHED, node.run_id, {
            "node_id": node.node_id, "node_type": node.node_type.value, "status": node.status.value,
            "outputs": dict(node.outputs), "error": node.error, "attempt": node.attempt,
            "latency": node.latency, "tokens": node.spent.tokens, "price": node.spent.price,
        })

    @classmethod
    def finished(cls, run: WorkflowRun) -> WorkflowEvent:
        return cls(WorkflowEventKind.WORKFLOW_FINISHED, run.id, {
            "status": run.status.value, "outputs": dict(run.outputs), "error": run.error,
            "latency": run.latency, "tokens": run.spent.tokens, "price": run.spent.price,
        })
