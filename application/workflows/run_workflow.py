"""RunWorkflow: one run of a workflow's graph, checked, bounded in time and depth, and recorded.

The run's inputs are checked against its start node first (`InputsInvalid` names each one wrong).
The run is recorded as it starts, and with its nodes as it ends, however it ends: succeeded, failed
(a node failed), `timeout` (past `timeout` seconds), or `stopped` (its caller cancelled it: the
parent turn stopped, a blocking run's client went away, a streamed run was stopped: logged_run.py),
in which case the cancellation goes on up once the record is written. Its events go to `on_event` as
they happen (a streamed run's event log, a turn's own stream).

Its model calls are billed to the scope it runs in (a turn's, for a workflow an agent called), else
to the run's account (application/model_calls/call_scope.py). A run started inside another's is one
deeper (application/workflows/depth.py); past `max_depth`, it is refused before it starts.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from application.errors import InvalidInput
from application.model_calls.call_scope import CallScope, calls_for, current_scope
from application.workflows.depth import current_depth, running_at
from application.workflows.node_work import RunContext
from domain.workflows.events import WorkflowEvent
from domain.workflows.inputs import check_inputs
from domain.workflows.runs import RunStatus, Spent, WorkflowRun

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping

    from application.ports.runtime import Clock, IdGenerator
    from application.ports.workflow_runs import WorkflowRunStore
    from application.workflows.scheduler import Scheduler
    from domain.ids import EndUserId, MessageId, OwnerId, ThoughtId
    from domain.workflows.graph import Graph, Node
    from domain.workflows.runs import NodeRun

    OnEvent = Callable[[WorkflowEvent], None]

DEFAULT_TIMEOUT = 300.0
DEFAULT_MAX_DEPTH = 3


@dataclass(frozen=True, slots=True)
class RunRequest:
    """A run of `graph`, the workflow's draft (`version` None) or one of its versions. `model`: the
    calling agent's model profile; `parent_*`: the turn's message and step that called it; `run_id`:
    the run's id when its caller needs it before the run starts (a streamed run's event log)."""

    owner: OwnerId
    end_user: EndUserId
    workflow_id: str
    version: int | None
    graph: Graph
    inputs: Mapping[str, Any] = field(default_factory=dict)
    model: str | None = None
    parent_message_id: MessageId | None = None
    parent_step_id: ThoughtId | None = None
    run_id: str | None = None


class RunWorkflow:
    def __init__(
        self, scheduler: Scheduler, runs: WorkflowRunStore, clock: Clock, ids: IdGenerator,
        timeout: float = DEFAULT_TIMEOUT, max_depth: int = DEFAULT_MAX_DEPTH,
    ) -> None:
        self._scheduler = scheduler
        self._runs = runs
        self._clock = clock
        self._ids = ids
        self._timeout = timeout
        self._max_depth = max_depth

    async def __call__(self, request: RunRequest, on_event: OnEvent | None = None) -> WorkflowRun:
        """The finished run. Raises `InputsInvalid`, `InvalidInput` (nested too deep), or
        `CancelledError` once a cancelled run is recorded `stopped`."""
        inputs = check_inputs(request.graph.start, request.inputs)
        depth = current_depth() + 1
        if depth > self._max_depth:
            raise InvalidInput(f"Workflows run inside each other at most {self._max_depth} deep; "
                               f"this one would be {depth} deep.")
        run = WorkflowRun(
            id=request.run_id or self._ids.new_id(), owner=request.owner, end_user=request.end_user,
            workflow_id=request.workflow_id, version=request.version, inputs=inputs, started_at=self._clock.now(),
            depth=depth, parent_message_id=request.parent_message_id, parent_step_id=request.parent_step_id,
        )
        trace = _Recording(run.id, on_event or _ignore)
        await self._runs.start(run)
        trace.emit(WorkflowEvent.started(run))
        context = RunContext(run.id, run.owner, run.end_user, depth, self._scheduler, request.model)
        with running_at(depth), _billed(run):
            try:
                async with asyncio.timeout(self._timeout):
                    outcome = await self._scheduler.run(request.graph, inputs, context, trace=trace)
            except TimeoutError:
                ended = run.finish(RunStatus.TIMEOUT, self._clock.now(), spent=trace.spent,
                                   error=f"The run took longer than {self._timeout:g} s.")
            except asyncio.CancelledError:
                await self._end(run.finish(RunStatus.STOPPED, self._clock.now(), spent=trace.spent,
                                           error="The run was stopped."), trace)
                raise
            else:
                status = RunStatus.FAILED if outcome.error else RunStatus.SUCCEEDED
                ended = run.finish(status, self._clock.now(), outputs=outcome.outputs, error=outcome.error,
                                   spent=outcome.spent)
        await self._end(ended, trace)
        return ended

    async def _end(self, run: WorkflowRun, trace: _Recording) -> None:
        # Shielded: a run stopped by its caller is still recorded as stopped, whatever else is cancelled.
        await asyncio.shield(self._runs.finish(run, trace.in_order()))
        trace.emit(WorkflowEvent.finished(run))


def _ignore(event: WorkflowEvent) -> None:
    pass


@contextlib.contextmanager
def _billed(run: WorkflowRun) -> Iterator[None]:
    """Its model calls are the calling turn's when a turn runs it, else its account's."""
    if current_scope() is not None:
        yield
        return
    with calls_for(CallScope(owner=run.owner, agent_id="")):
        yield


class _Recording:
    """The scheduler's trace of the run: each node's run kept for the record, each event passed on."""

    def __init__(self, run_id: str, on_event: OnEvent) -> None:
        self._run_id = run_id
        self.emit = on_event
        self._nodes: list[NodeRun] = []

    def started(self, node: Node) -> None:
        self.emit(WorkflowEvent.node_started(self._run_id, node.id, node.type.value))

    def finished(self, node: NodeRun) -> None:
        self._nodes.append(node)
        self.emit(WorkflowEvent.node_finished(node))

    @property
    def spent(self) -> Spent:
        return sum((node.spent for node in self._nodes), Spent())

    def in_order(self) -> list[NodeRun]:
        """The nodes in the order they started (a skipped one where it was found never to run)."""
        return sorted(self._nodes, key=lambda n: n.started_at)
