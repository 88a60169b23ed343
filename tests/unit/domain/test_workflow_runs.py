"""A workflow run finishes once, never back to running, with outputs only on success and a reason
otherwise; a node run is born finished, skipped ones never tried."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from domain.errors import DomainError
from domain.ids import EndUserId, OwnerId
from domain.workflows.events import WorkflowEvent
from domain.workflows.graph import NodeType
from domain.workflows.runs import NodeRun, NodeStatus, RunStatus, Spent, WorkflowRun

T0 = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
LATER = T0 + timedelta(seconds=2.5)


def run(**fields: object) -> WorkflowRun:
    values: dict[str, object] = {"id": "r1", "owner": OwnerId("alice"), "end_user": EndUserId("u1"),
                                 "workflow_id": "wf1", "version": 2, "inputs": {"city": "Paris"}, "started_at": T0}
    return WorkflowRun(**{**values, **fields})  # type: ignore[arg-type]


def test_a_run_finishes_once_with_its_latency_outputs_and_spend() -> None:
    done = run().finish(RunStatus.SUCCEEDED, LATER, outputs={"out": 1}, spent=Spent(10, 0.01))
    assert (done.status, dict(done.outputs), done.latency, done.spent, done.finished_at) == (
        RunStatus.SUCCEEDED, {"out": 1}, 2.5, Spent(10, 0.01), LATER)
    with pytest.raises(DomainError, match="already finished"):
        done.finish(RunStatus.FAILED, LATER, error="again")


def test_a_run_cannot_finish_running_nor_fail_without_a_reason_nor_succeed_with_one() -> None:
    with pytest.raises(DomainError):
        run().finish(RunStatus.RUNNING, LATER)
    with pytest.raises(DomainError, match="says why"):
        run().finish(RunStatus.TIMEOUT, LATER)
    with pytest.raises(DomainError, match="no error"):
        run().finish(RunStatus.SUCCEEDED, LATER, error="oops")


def test_only_a_successful_run_keeps_outputs() -> None:
    failed = run().finish(RunStatus.FAILED, LATER, outputs={"partial": 1}, error="node x failed")
    assert dict(failed.outputs) == {}


def test_a_run_has_a_finish_time_exactly_when_it_is_finished_and_a_depth_from_one() -> None:
    with pytest.raises(DomainError):
        run(finished_at=LATER)
    with pytest.raises(DomainError):
        run(depth=0)


def test_a_run_is_seen_by_its_account_and_its_end_user_only() -> None:
    assert run().visible_to("alice", None)
    assert run().visible_to("alice", "u1")
    assert not run().visible_to("alice", "u2")
    assert not run().visible_to("bob", None)


def test_a_skipped_node_never_ran_and_a_failed_or_stopped_one_says_why() -> None:
    skipped = NodeRun.skipped("r1", "n1", NodeType.LLM, T0)
    assert (skipped.status, skipped.attempt) == (NodeStatus.SKIPPED, 0)
    with pytest.raises(DomainError):
        NodeRun("r1", "n1", NodeType.LLM, NodeStatus.SUCCEEDED, T0, T0, attempt=0)
    with pytest.raises(DomainError, match="says why"):
        NodeRun("r1", "n1", NodeType.LLM, NodeStatus.STOPPED, T0, T0)
    with pytest.raises(DomainError):
        NodeRun("r1", "n1", NodeType.LLM, NodeStatus.SUCCEEDED, LATER, T0)


def test_spend_adds_up_and_is_never_negative() -> None:
    assert Spent(1, 0.5) + Spent(2, 0.25) == Spent(3, 0.75)
    with pytest.raises(DomainError):
        Spent(-1, 0)


def test_a_node_event_carries_what_a_trace_shows() -> None:
    node = NodeRun("r1", "n1", NodeType.LLM, NodeStatus.SUCCEEDED, T0, LATER, outputs={"text": "hi"},
                   spent=Spent(5, 0.1), latency=2.5)
    assert WorkflowEvent.node_finished(node).to_dict() == {
        "event": "node_finished", "workflow_run_id": "r1", "node_id": "n1", "node_type": "llm",
        "status": "succeeded", "outputs": {"text": "hi"}, "error": None, "attempt": 1, "latency": 2.5,
        "tokens": 5, "price": 0.1,
    }
