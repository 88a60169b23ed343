"""The retention policy: cut-offs reckoned from the caller's time, kinds kept for good, and its rules."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from domain.errors import DomainError
from domain.retention import BatchLimits, Cutoffs, PruneCounts, RetentionPolicy

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
DAY = timedelta(days=1)


def test_cutoffs_are_each_age_before_the_time_given() -> None:
    policy = RetentionPolicy(prompt_snapshots=30 * DAY, steps=90 * DAY, deleted_conversations=7 * DAY,
                             model_calls=400 * DAY, workflow_runs=60 * DAY)
    assert policy.cutoffs(NOW) == Cutoffs(
        prompt_snapshots=NOW - 30 * DAY, steps=NOW - 90 * DAY, deleted_conversations=NOW - 7 * DAY,
        model_calls=NOW - 400 * DAY, workflow_runs=NOW - 60 * DAY,
    )


def test_a_kind_without_an_age_has_no_cutoff_and_is_kept_for_good() -> None:
    policy = RetentionPolicy(prompt_snapshots=None, steps=DAY, deleted_conversations=None, model_calls=None)
    cutoffs = policy.cutoffs(NOW)
    assert (cutoffs.prompt_snapshots, cutoffs.deleted_conversations, cutoffs.model_calls,
            cutoffs.workflow_runs) == (None, None, None, None)
    assert cutoffs.steps == NOW - DAY


@pytest.mark.parametrize("age", [timedelta(0), -DAY])
def test_an_age_that_is_not_positive_is_refused(age: timedelta) -> None:
    with pytest.raises(DomainError, match="steps must be positive"):
        RetentionPolicy(prompt_snapshots=DAY, steps=age, deleted_conversations=DAY, model_calls=DAY)


def test_cutoffs_need_a_timezone_aware_time() -> None:
    policy = RetentionPolicy(prompt_snapshots=DAY, steps=DAY, deleted_conversations=DAY, model_calls=DAY)
    with pytest.raises(DomainError, match="timezone-aware"):
        policy.cutoffs(datetime(2026, 6, 1))  # noqa: DTZ001 - the naive time it must refuse


def test_batch_limits_hold_a_row_at_least_and_never_pause_backwards() -> None:
    with pytest.raises(DomainError, match="at least one row"):
        BatchLimits(size=0)
    with pytest.raises(DomainError, match="cannot be negative"):
        BatchLimits(pause=-0.1)
    assert BatchLimits(size=1, pause=0.0) == BatchLimits(1, 0.0)


def test_counts_are_named_per_kind_and_add_up() -> None:
    counts = PruneCounts(deleted_conversations=1, conversation_messages=2, conversation_steps=3, steps=4,
                         prompt_snapshots=5, model_calls=6, conversation_workflow_runs=7, conversation_node_runs=8,
                         workflow_runs=9, node_runs=10)
    assert counts.as_dict() == {
        "deleted_conversations": 1, "conversation_messages": 2, "conversation_steps": 3,
        "conversation_workflow_runs": 7, "conversation_node_runs": 8, "steps": 4, "prompt_snapshots": 5,
        "model_calls": 6, "workflow_runs": 9, "node_runs": 10,
    }
    assert counts.total == 55
