"""The workflows an agent offers as tools in a turn (docs/workflows.md, "Attaching a workflow to an agent")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from domain.agents.config import WorkflowRef
    from domain.ids import EndUserId, MessageId, OwnerId, ThoughtId
    from domain.tools.calls import ToolSpec
    from domain.workflows.events import WorkflowEvent


@dataclass(frozen=True, slots=True)
class WorkflowCall:
    """Who runs a workflow tool, from which turn and step, on which model profile."""

    owner: OwnerId
    end_user: EndUserId
    message_id: MessageId
    step_id: ThoughtId
    model: str


class WorkflowTools(Protocol):
    async def specs(self, refs: Sequence[WorkflowRef], owner: OwnerId) -> dict[str, ToolSpec]:
        """Each pinned version's tool, by its workflow id: named after the workflow, its start node's
        inputs as parameters; a version no longer there (the config was published before) is left out."""
        ...

    async def run(
        self, ref: WorkflowRef, arguments: Mapping[str, Any], call: WorkflowCall,
        on_event: Callable[[WorkflowEvent], None],
    ) -> Mapping[str, Any]:
        """The end outputs of one run; raises `ToolCallFailed` with the run's error when it fails, and
        `CancelledError` once a stopped run is recorded `stopped`."""
        ...
