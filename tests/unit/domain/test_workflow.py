"""The workflow aggregate: its name is a tool's name, its draft is saved over the revision read,
publishing numbers versions, and an archived workflow no longer changes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from domain.errors import DomainError
from domain.ids import OwnerId
from domain.workflows.workflow import Workflow, WorkflowConflict, WorkflowId
from tests.workflow_graphs import simple

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def workflow(name: str = "trip_plan") -> Workflow:
    return Workflow(WorkflowId("w1"), OwnerId("alice"), name, "Plans a trip.", simple(), 1, 0, False, T0, T0)


@pytest.mark.parametrize("name", ["", "trip plan", "x" * 65, "voyage✓"])
def test_a_name_is_what_a_tool_may_be_named(name: str) -> None:
    with pytest.raises(DomainError, match="1 to 64 letters"):
        workflow(name)


def test_a_draft_is_saved_over_the_revision_read_and_a_stale_one_is_a_conflict() -> None:
    saved = workflow().saved_draft(1, simple(edges=[]), T0 + timedelta(1))

    assert (saved.revision, saved.graph["edges"], saved.updated_at) == (2, [], T0 + timedelta(1))
    with pytest.raises(WorkflowConflict, match="at revision 2, not 1"):
        saved.saved_draft(1, simple(), T0)


def test_publishing_numbers_versions_and_an_unchanged_graph_is_nothing_to_publish() -> None:
    first, v1 = workflow().published(" first ", {"type": "object"}, None, T0)
    assert (first.latest_version, v1.number, v1.note, v1.graph) == (1, 1, "first", simple())

    with pytest.raises(WorkflowConflict, match="Nothing changed since version 1"):
        first.published("again", {}, v1, T0)
    changed = first.saved_draft(1, simple(edges=[]), T0)
    second, v2 = changed.published("", {}, v1, T0)
    assert (second.latest_version, v2.number) == (2, 2)


def test_an_archived_workflow_can_be_neither_saved_nor_published_nor_archived_again() -> None:
    archived = workflow().archived_at(T0)

    assert archived.archived
    for change in (lambda: archived.saved_draft(1, simple(), T0), lambda: archived.published("", {}, None, T0),
                   lambda: archived.archived_at(T0)):
        with pytest.raises(WorkflowConflict, match="is archived"):
            change()
