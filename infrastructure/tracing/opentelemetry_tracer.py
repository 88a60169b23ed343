"""The `Tracer` port on the OpenTelemetry SDK (the optional `memagent[otel]` extra).

The adapter keeps a `TracerProvider` of its own rather than the process-wide one, so tests can give
each their own exporter; the current span still lives in OpenTelemetry's context (a context
variable), so spans opened in one task nest. Attributes are named `memagent.<name>`.
"""

from __future__ import annotations

import asyncio
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from application.ports.tracing import AttributeValue, Span, TraceParent

if TYPE_CHECKING:
    from collections.abc import Iterator

    from opentelemetry.sdk.trace import TracerProvider

PREFIX = "memagent."
_W3C = TraceContextTextMapPropagator()


class OpenTelemetrySpan(Span):
    def __init__(self, span: trace.Span) -> None:
        self._span = span

    @property
    def trace_id(self) -> str:
        context = self._span.get_span_context()
        return trace.format_trace_id(context.trace_id) if context.is_valid else ""

    def set(self, **attributes: AttributeValue) -> None:
        self._span.set_attributes(_named(attributes))

    def fail(self, description: str) -> None:
        self._span.set_status(Status(StatusCode.ERROR, description))


class OpenTelemetryTracer:
    def __init__(self, provider: TracerProvider) -> None:
        self._provider = provider
        self._tracer = provider.get_tracer("memagent")

    def span(
        self, name: str, parent: TraceParent | None = None, **attributes: AttributeValue
    ) -> AbstractContextManager[Span]:
        return self._current(name, _context_of(parent) if parent is not None else None, attributes)

    @contextmanager
    def _current(
        self, name: str, context: otel_context.Context | None, attributes: dict[str, AttributeValue]
    ) -> Iterator[Span]:
        with self._tracer.start_as_current_span(
            name, context=context, attributes=_named(attributes), record_exception=False,
            set_status_on_exception=False,
        ) as span:
            try:
                yield OpenTelemetrySpan(span)
            except BaseException as error:
                _ended_by(span, error)
                raise

    @contextmanager
    def leaf_span(self, name: str, **attributes: AttributeValue) -> Iterator[Span]:
        span = self._tracer.start_span(name, attributes=_named(attributes))
        try:
            yield OpenTelemetrySpan(span)
        except BaseException as error:
            _ended_by(span, error)
            raise
        finally:
            span.end()

    def current(self) -> TraceParent | None:
        carrier: dict[str, str] = {}
        _W3C.inject(carrier)
        if "traceparent" not in carrier:
            return None
        return TraceParent(carrier["traceparent"], carrier.get("tracestate", ""))

    @contextmanager
    def resumed(self, parent: TraceParent) -> Iterator[None]:
        token = otel_context.attach(_context_of(parent))
        try:
            yield
        finally:
            otel_context.detach(token)

    def shutdown(self) -> None:
        """Exports what is still buffered (the provider also does this at the process's exit)."""
        self._provider.shutdown()


def _ended_by(span: trace.Span, error: BaseException) -> None:
    """A failure fails the span, named by its class only (an exception's text may quote a secret);
    a stop does not: a cancelled task, a stream its reader closed."""
    if isinstance(error, GeneratorExit | asyncio.CancelledError):
        span.set_attribute(PREFIX + "cancelled", True)
        return
    span.set_status(Status(StatusCode.ERROR, type(error).__name__))


def _context_of(parent: TraceParent) -> otel_context.Context:
    """The context of a W3C parent; an unreadable one gives an empty context (a new trace)."""
    carrier = {"traceparent": parent.traceparent}
    if parent.tracestate:
        carrier["tracestate"] = parent.tracestate
    return _W3C.extract(carrier, context=otel_context.Context())


def _named(attributes: dict[str, AttributeValue]) -> dict[str, AttributeValue]:
    return {PREFIX + name: value for name, value in attributes.items()}
