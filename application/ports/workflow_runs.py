"""WorkflowRunStore: the record of workflow runs and of each node's run in them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from collections.abc import Sequence

    from domain.ids import EndUserId, OwnerId
    from domain.workflows.runs import NodeRun, WorkflowRun


@dataclass(frozen=True, slots=True)
class RecordedRun:
    run: WorkflowRun
    nodes: tuple[NodeRun, ...]  # in the order they ran


class WorkflowRunStore(Protocol):
    async def start(self, run: WorkflowRun) -> None:
        """Records a run as it starts (`running`, no node yet)."""
        ...

    async def finish(self, run: WorkflowRun, nodes: Sequence[NodeRun]) -> None:
        """Records how a started run ended, with its nodes' runs in the order they ran, at once:
        a run's record never shows it finished with some of its nodes missing."""
        ...

    async def get(self, run_id: str, owner: OwnerId, end_user: EndUserId | None = None) -> RecordedRun | None:
        """The run with its nodes, when `owner` (and `end_user`, unless None: the whole account) owns it."""
        ...
