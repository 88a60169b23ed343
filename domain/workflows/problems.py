"""What is wrong with a workflow, or with a run's inputs: every problem at once, each named by the
path of the JSON value it is about (`nodes[2].prompt`, `edges[0].target`, `inputs.city`), so that
an editor can point at each."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from domain.errors import DomainError

if TYPE_CHECKING:
    from collections.abc import Iterable


@dataclass(frozen=True, slots=True)
class Problem:
    path: str  # where in the JSON: `nodes[2].prompt`; "" for the whole value
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


class Problems(DomainError):
    """Several problems of one value; the message names each by its path."""

    lead = "The value is not valid"

    def __init__(self, problems: Iterable[Problem]) -> None:
        self.problems = tuple(problems)
        super().__init__(f"{self.lead}: {'; '.join(str(p) for p in self.problems)}.")


class WorkflowInvalid(Problems):
    """A graph that cannot run: the fields of its nodes, its edges, a cycle, a template that reads
    a node that does not run before it, its start and end nodes."""

    lead = "The workflow is not valid"


class InputsInvalid(Problems):
    """A run's inputs that the start node does not accept: missing, mistyped, unknown."""

    lead = "The inputs are not valid"
