"""Workflows as data: a workflow, its draft graph, and its immutable numbered versions.

A workflow belongs to an owner (an account). Its name is the name of the tool it becomes, unique
among the owner's workflows that are not archived. Its draft is the graph as JSON, kept as it was
sent, with a `revision` that grows with every save, so that two editors never overwrite each other
silently. Publishing snapshots the draft as version 1, 2, 3…, with a note and the tool's parameters
(the JSON Schema of the start node's inputs); a version never changes, so an agent that pins one
keeps the tool it was built with. An archived workflow can be read, nothing else.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, NewType

from domain.errors import DomainError

if TYPE_CHECKING:
    from collections.abc import Mapping
    from datetime import datetime

    from domain.ids import OwnerId

WorkflowId = NewType("WorkflowId", str)

WORKFLOW_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")  # a tool's name, as models accept it
MAX_DESCRIPTION = 2000  # the tool's description
MAX_NOTE = 2000
# The highest version or draft revision: both are stored as a 32-bit integer (PostgreSQL's `integer`).
MAX_VERSION = 2**31 - 1


class WorkflowConflict(DomainError):
    """A change that the workflow's state forbids: a stale draft revision, nothing new to publish,
    an archived workflow."""


@dataclass(frozen=True, slots=True)
class WorkflowVersion:
    workflow_id: WorkflowId
    number: int
    graph: Mapping[str, Any]  # the draft's JSON as it was published
    note: str
    tool_schema: Mapping[str, Any]  # the JSON Schema of the start node's inputs: the tool's parameters
    published_at: datetime

    def __post_init__(self) -> None:
        if self.number < 1:
            raise DomainError("a version number starts at 1")
        if len(self.note) > MAX_NOTE:
            raise DomainError(f"a note has at most {MAX_NOTE} characters")


@dataclass(frozen=True, slots=True)
class Workflow:
    id: WorkflowId
    owner: OwnerId
    name: str
    description: str
    graph: Mapping[str, Any]  # the draft: the JSON as it was saved, checked by `validation.parse_graph`
    revision: int
    latest_version: int  # 0 until the first publish
    archived: bool
    created_at: datetime
    updated_at: datetime

    def __post_init__(self) -> None:
        if not WORKFLOW_NAME.fullmatch(self.name):
            raise DomainError("a workflow's name has 1 to 64 letters, digits, '_' or '-': it is its tool's name")
        if len(self.description) > MAX_DESCRIPTION:
            raise DomainError(f"a workflow's description has at most {MAX_DESCRIPTION} characters")

    def _must_be_active(self) -> None:
        if self.archived:
            raise WorkflowConflict(f"Workflow {self.id!r} is archived.")

    def saved_draft(self, revision: int, graph: Mapping[str, Any], at: datetime) -> Workflow:
        """The draft saved over `revision`, the one the editor read; a newer one is a conflict."""
        self._must_be_active()
        if revision != self.revision:
            raise WorkflowConflict(
                f"The draft is at revision {self.revision}, not {revision}: someone saved it meanwhile."
            )
        return replace(self, graph=graph, revision=revision + 1, updated_at=at)

    def published(
        self, note: str, tool_schema: Mapping[str, Any], last: WorkflowVersion | None, at: datetime
    ) -> tuple[Workflow, WorkflowVersion]:
        """The draft as the next version; the same graph as the last version's is nothing to publish."""
        self._must_be_active()
        if last is not None and last.graph == self.graph:
            raise WorkflowConflict(f"Nothing changed since version {last.number}: there is nothing to publish.")
        version = WorkflowVersion(self.id, self.latest_version + 1, self.graph, note.strip(), tool_schema, at)
        return replace(self, latest_version=version.number, updated_at=at), version

    def archived_at(self, at: datetime) -> Workflow:
        """Archived: it can be read, its versions too, but no longer changed; its name is free again."""
        self._must_be_active()
        return replace(self, archived=True, updated_at=at)
