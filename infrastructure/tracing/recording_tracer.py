"""The `Tracer` port in memory, for tests: every span with its name, attributes, parent and status,
nested as OpenTelemetry nests them (a context variable holds the current span)."""

from __future__ import annotations

import secrets
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from application.ports.tracing import AttributeValue, Span, TraceParent

if TYPE_CHECKING:
    from collections.abc import Iterator


@dataclass(eq=False)
class RecordedSpan(Span):
    name: str
    attributes: dict[str, AttributeValue]
    parent: RecordedSpan | None
    remote_parent: TraceParent | None = None
    failure: str | None = None
    ended: bool = False
    trace: str = field(default_factory=lambda: secrets.token_hex(16))

    @property
    def trace_id(self) -> str:
        return self.parent.trace_id if self.parent is not None else self.trace

    def set(self, **attributes: AttributeValue) -> None:
        self.attributes.update(attributes)

    def fail(self, description: str) -> None:
        self.failure = description


class RecordingTracer:
    def __init__(self) -> None:
        self.spans: list[RecordedSpan] = []
        self._current: ContextVar[RecordedSpan | None] = ContextVar("recorded_span", default=None)

    def named(self, name: str) -> list[RecordedSpan]:
        return [span for span in self.spans if span.name == name]

    def span(
        self, name: str, parent: TraceParent | None = None, **attributes: AttributeValue
    ) -> AbstractContextManager[Span]:
        return self._open(name, parent, attributes, current=True)

    def leaf_span(self, name: str, **attributes: AttributeValue) -> AbstractContextManager[Span]:
        return self._open(name, None, attributes, current=False)

    @contextmanager
    def _open(
        self, name: str, remote: TraceParent | None, attributes: dict[str, AttributeValue], current: bool
    ) -> Iterator[Span]:
        span = RecordedSpan(name, dict(attributes), None if remote else self._current.get(), remote)
        if remote is not None:  # the remote trace goes on
            span.trace = remote.traceparent.split("-")[1]
        self.spans.append(span)
        token = self._current.set(span) if current else None
        try:
            yield span
        except Exception as error:
            span.failure = span.failure or type(error).__name__
            raise
        finally:
            span.ended = True
            if token is not None:
                self._current.reset(token)

    def current(self) -> TraceParent | None:
        span = self._current.get()
        return None if span is None else TraceParent(f"00-{span.trace_id}-{secrets.token_hex(8)}-01")

    @contextmanager
    def resumed(self, parent: TraceParent) -> Iterator[None]:
        yield
