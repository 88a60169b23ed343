"""A streamed workflow run as a task: its events in a log of its own, ended by one terminal event;
stopped through the task control's flag; a run that failed with no end of its own ends its log with
the failure's code and message; and who may follow or stop it is its record's to say."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import pytest

from application.chat_turn.turn_watch import TurnWatch, WatchTimes
from application.errors import Conflict, NotFound, StoreUnavailable
from application.tasks.find_task import FindTask
from application.tasks.follow_task import FollowTask, FollowTimes
from application.workflows.follow_run import FollowRun
from application.workflows.launch_run import LaunchRun
from application.workflows.logged_run import LoggedRun
from application.workflows.run_workflow import RunRequest, RunWorkflow
from application.workflows.stop_run import StopRun
from domain.conversations.thoughts import ThoughtEvent
from domain.ids import EndUserId, OwnerId
from domain.workflows.graph import NodeType
from domain.workflows.runs import RunStatus
from infrastructure.events.inprocess_event_log import InProcessEventLog
from infrastructure.events.inprocess_task_control import InProcessTaskControl
from infrastructure.events.inprocess_task_presence import InProcessTaskPresence
from infrastructure.runtime.system import AsyncioSpawner
from tests.fake_message_store import FakeMessageStore
from tests.fake_workflows import FakeWorkflowRunStore, end, graph, node, start
from tests.fakes import FakeClock, SequentialIds
from tests.unit.application.workflow_engine import ALICE, Engine

if TYPE_CHECKING:
    from collections.abc import Mapping

    from application.ports.event_log import LoggedEvent
    from application.workflows.node_work import RunContext
    from domain.ids import TaskId
    from domain.workflows.runs import WorkflowRun

STARTED_FINISHED = ("node_started", "node_finished")
FLOW = graph([start(), node("l1", NodeType.LLM), end(text="{{ l1.text }}")], "start>l1", "l1>end")


class UnwritableRuns(FakeWorkflowRunStore):
    async def start(self, run: WorkflowRun) -> None:
        raise StoreUnavailable("The database is unavailable.")


class Streamed:
    """The run's use cases as the wiring builds them, over the in-process adapters."""

    def __init__(self, engine: Engine, runs: FakeWorkflowRunStore | None = None) -> None:
        """`runs`: the store the runs write to, instead of the engine's."""
        clock = FakeClock(step=0.0)  # no time passes for the leases: no client is ever gone
        self.engine, self.tasks, self.log = engine, InProcessTaskControl(), InProcessEventLog()
        presence, self.spawner = InProcessTaskPresence(), AsyncioSpawner()

        def new_watch(**bound: Any) -> TurnWatch:
            return TurnWatch(self.tasks, presence, clock, times=WatchTimes(stop_check_interval=0.01), **bound)

        run = engine.run_workflow if runs is None else RunWorkflow(engine.scheduler, runs, clock, SequentialIds())
        logged = LoggedRun(run, self.log, new_watch, retention=60)
        self.launch = LaunchRun(logged, self.tasks, self.log, self.spawner, SequentialIds(), task_ttl=60)
        store = FakeMessageStore()
        follow = FollowTask(FindTask(self.tasks, store, 60), self.tasks, self.log, presence, store, clock,
                            FollowTimes())
        self.follow = FollowRun(engine.store, self.tasks, self.log, follow)
        self.stop = StopRun(engine.store, self.tasks, settle=5)

    async def logged(self, key: TaskId) -> list[LoggedEvent]:
        await asyncio.wait_for(self.spawner.drain(5), 6)
        return await self.log.read(key, 0, 0)


def request() -> RunRequest:
    return RunRequest(ALICE, EndUserId("ann"), "wf1", 1, FLOW)


def waits_for_a_stop(engine: Engine) -> asyncio.Event:
    running = asyncio.Event()

    async def script(scope: Mapping[str, Any], context: RunContext) -> Mapping[str, Any]:
        running.set()
        await asyncio.Event().wait()
        return {}

    engine.script("l1", script)
    return running


async def test_a_streamed_run_logs_its_events_as_the_run_reports_them_then_one_end() -> None:
    streamed = Streamed(Engine())
    streamed.engine.returns("l1", text="sunny")

    key = await streamed.launch(request())
    logged = await streamed.logged(key)

    assert [e.id for e in logged] == list(range(1, 10))
    assert [e.thought.event for e in logged][-2:] == [ThoughtEvent.WORKFLOW_FINISHED, ThoughtEvent.AGENT_END]
    assert [(e.thought.event.value, e.thought.workflow.get("node_id")) for e in logged[:-1]] == [
        ("workflow_started", None), *[(kind, n) for n in ("start", "l1", "end") for kind in STARTED_FINISHED],
        ("workflow_finished", None),
    ]
    assert {e.thought.workflow["workflow_run_id"] for e in logged[:-1]} == {key}
    assert logged[-2].thought.workflow["outputs"] == {"text": "sunny"}
    assert await streamed.follow.has_ended(key, 9)


async def test_a_stop_reaches_the_run_through_the_task_control_and_is_recorded() -> None:
    streamed = Streamed(Engine())
    running = waits_for_a_stop(streamed.engine)

    key = await streamed.launch(request())
    await asyncio.wait_for(running.wait(), 5)
    status = await streamed.stop(key, ALICE, EndUserId("ann"))
    logged = await streamed.logged(key)

    assert status is RunStatus.STOPPED
    assert logged[-2].thought.workflow["status"] == "stopped"
    assert logged[-1].thought.event is ThoughtEvent.AGENT_END
    with pytest.raises(Conflict, match="'stopped'"):
        await streamed.stop(key, ALICE, None)


async def test_a_run_that_fails_with_no_end_of_its_own_ends_its_log_with_the_failure() -> None:
    streamed = Streamed(Engine(), runs=UnwritableRuns())

    logged = await streamed.logged(await streamed.launch(request()))

    [end_event] = logged
    assert (end_event.thought.event, end_event.thought.error_code) == (ThoughtEvent.ERROR, "store_unavailable")
    assert end_event.thought.observation == "The database is unavailable."


async def test_only_the_runs_owner_and_its_end_user_may_follow_or_stop_it() -> None:
    streamed = Streamed(Engine())
    running = waits_for_a_stop(streamed.engine)
    key = await streamed.launch(request())
    await asyncio.wait_for(running.wait(), 5)

    for owner, end_user in ((OwnerId("bob"), None), (ALICE, EndUserId("ben"))):
        with pytest.raises(NotFound):
            await streamed.follow.owned(key, owner, end_user)
        with pytest.raises(NotFound):
            await streamed.stop(key, owner, end_user)
    assert await streamed.follow.owned(key, ALICE, EndUserId("ann")) == key
    await streamed.stop(key, ALICE, None)
    await streamed.logged(key)


async def test_a_blocking_run_has_no_log_to_follow_and_no_flag_to_stop_it() -> None:
    engine = Engine()
    running = waits_for_a_stop(engine)
    streamed = Streamed(engine)
    blocking = asyncio.create_task(engine.run_workflow(request()))
    await asyncio.wait_for(running.wait(), 5)
    [run_id] = engine.store.runs

    with pytest.raises(NotFound, match="no events to follow"):
        await streamed.follow.owned(run_id, ALICE, None)
    with pytest.raises(Conflict, match="only a streamed run"):
        await streamed.stop(run_id, ALICE, None)
    blocking.cancel()
    await asyncio.gather(blocking, return_exceptions=True)
