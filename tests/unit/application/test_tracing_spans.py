"""Spans the application opens through the Tracer port, seen by the recording fake: each tool call
is a child of the span current when it runs, failed when the tool failed; the turn's ids reach the
log fields inside a span's block and leave with it."""

from __future__ import annotations

from typing import Any

from application.chat_turn.tool_executor import ToolExecutor
from application.errors import ToolCallFailed
from application.log_context import current_log_fields, log_fields
from application.ports.tracing import NO_TRACER, SpanName, TraceParent
from domain.tools.calls import RetryPolicy, ToolCall, ToolFailure
from infrastructure.metrics.inprocess_metrics import InProcessMetrics
from infrastructure.tracing.recording_tracer import RecordingTracer
from tests.fakes import FakeToolBox


async def echo(arguments: Any) -> str:
    return str(arguments)


async def refuse(arguments: Any) -> str:
    raise ToolCallFailed(ToolFailure.PERMISSION_DENIED, "not for you")


async def test_each_tool_call_is_a_child_span_failed_when_the_tool_failed() -> None:
    tracer = RecordingTracer()
    toolbox = FakeToolBox({"echo": echo, "refuse": refuse})
    executor = ToolExecutor(toolbox, RetryPolicy(), 5.0, InProcessMetrics(), {"echo", "refuse"}, tracer)
    with tracer.span(SpanName.TURN, TraceParent("00-" + "ab" * 16 + "-" + "cd" * 8 + "-01")) as turn:
        await executor.run_all([ToolCall("1", "echo", {"x": 1}), ToolCall("2", "refuse")])
    calls = tracer.named(SpanName.TOOL_CALL)
    assert [(c.attributes["tool"], c.attributes["outcome"], c.failure) for c in calls] == [
        ("echo", "ok", None), ("refuse", "permission_denied", "permission_denied")]
    assert all(c.parent is turn and c.ended for c in calls)
    assert {c.trace_id for c in calls} == {"ab" * 16}  # the remote parent's trace goes on


async def test_the_no_tracer_records_nothing_and_costs_the_call_nothing() -> None:
    executor = ToolExecutor(FakeToolBox({"echo": echo}), RetryPolicy(), 5.0, InProcessMetrics(), {"echo"}, NO_TRACER)
    with NO_TRACER.span(SpanName.TURN) as span:
        [result] = await executor.run_all([ToolCall("1", "echo")])
    assert (span.trace_id, NO_TRACER.current(), result.output) == ("", None, "{}")


def test_log_fields_nest_leave_out_empty_values_and_end_with_their_block() -> None:
    with log_fields(task_id="t1", trace_id=""):
        with log_fields(conversation_id="c1"):
            assert current_log_fields() == {"task_id": "t1", "conversation_id": "c1"}
        assert current_log_fields() == {"task_id": "t1"}
    assert current_log_fields() == {}
