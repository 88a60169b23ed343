"""How deep in workflows the current task runs: a workflow tool inside a workflow is one deeper.

A workflow runs a nested one through a tool node, and the tool box's port carries a call, not the
run it is part of; so the run sets its depth once in a contextvar, as a turn sets its model-call
scope (application/model_calls/call_scope.py), and every task it starts inherits it. Only a run
adds one, so each nesting counts once however many tools and nodes lie between the two runs.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator

_DEPTH: ContextVar[int] = ContextVar("memagent_workflow_depth", default=0)


def current_depth() -> int:
    """The depth of the run the current task is part of; 0 outside any run."""
    return _DEPTH.get()


@contextmanager
def running_at(depth: int) -> Iterator[None]:
    token = _DEPTH.set(depth)
    try:
        yield
    finally:
        _DEPTH.reset(token)
