"""Traces of what a turn does (docs/ARCHITECTURE.md §5 "Traces and logs"): one span per turn,
child spans for its recall, model calls, tool calls, save and each upkeep job.

The port keeps the tracing library out of the application: attributes are plain values, named
without a prefix (the adapter adds `memagent.`), and a trace's context crosses from a request to
the turn's background task as the W3C `traceparent`/`tracestate` strings (`TraceParent`), so it
is carried explicitly and needs no shared context object. `NO_TRACER` is the tracer when tracing
is off: every call costs next to nothing.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

AttributeValue = str | int | float | bool


class SpanName(StrEnum):
    TURN = "memagent.turn"
    RECALL = "memagent.recall"  # the short-term window and long-term recall
    MODEL_CALL = "memagent.model_call"  # any purpose: chat, summary, entities, title, follow_ups, embeddings
    TOOL_CALL = "memagent.tool_call"
    SAVE = "memagent.save"  # the outcome and steps stored
    UPKEEP_ENTITIES = "memagent.upkeep.entities"
    UPKEEP_SUMMARY = "memagent.upkeep.summary"
    UPKEEP_ARCHIVE = "memagent.upkeep.archive"  # the fold of old turns into an archive entry
    UPKEEP_RECALL_INDEX = "memagent.upkeep.recall_index"
    UPKEEP_TITLE = "memagent.upkeep.title"
    UPKEEP_FOLLOW_UPS = "memagent.upkeep.follow_ups"


@dataclass(frozen=True, slots=True)
class TraceParent:
    """A span context in W3C Trace Context form (https://www.w3.org/TR/trace-context/)."""

    traceparent: str
    tracestate: str = ""


class Span(Protocol):
    @property
    def trace_id(self) -> str:
        """The trace's id, 32 hex digits ("" when nothing is recorded)."""
        ...

    def set(self, **attributes: AttributeValue) -> None: ...

    def fail(self, description: str) -> None:
        """Marks the span's status an error, with a plain sentence (never a secret)."""
        ...


class Tracer(Protocol):
    def span(
        self, name: str, parent: TraceParent | None = None, **attributes: AttributeValue
    ) -> AbstractContextManager[Span]:
        """A span, current inside the block (spans opened there are its children); a child of
        `parent` when given, else of the current span. An exception leaving the block fails it."""
        ...

    def leaf_span(self, name: str, **attributes: AttributeValue) -> AbstractContextManager[Span]:
        """A child of the current span that never becomes current itself: for work that yields to
        its caller midway (a model call's stream), whose caller's spans must not become its children."""
        ...

    def current(self) -> TraceParent | None:
        """The current span's context, to hand to work that runs elsewhere; None when there is none."""
        ...

    def resumed(self, parent: TraceParent) -> AbstractContextManager[None]:
        """Inside the block, `parent` (a request's incoming context) is the current span context."""
        ...


class _NoSpan:
    trace_id = ""

    def set(self, **attributes: AttributeValue) -> None:
        return None

    def fail(self, description: str) -> None:
        return None


class NoTracer:
    """Tracing off: spans record nothing."""

    def span(
        self, name: str, parent: TraceParent | None = None, **attributes: AttributeValue
    ) -> AbstractContextManager[Span]:
        return nullcontext(_NO_SPAN)

    def leaf_span(self, name: str, **attributes: AttributeValue) -> AbstractContextManager[Span]:
        return nullcontext(_NO_SPAN)

    def current(self) -> TraceParent | None:
        return None

    def resumed(self, parent: TraceParent) -> AbstractContextManager[None]:
        return nullcontext()


_NO_SPAN = _NoSpan()
NO_TRACER: Tracer = NoTracer()
