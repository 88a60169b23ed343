"""Runs a round of tool calls under the tool failure policy: concurrently, bar sequential tools.

A timeout is retried `RetryPolicy.timeout_retries` times, `retry_delay` apart (domain.tools.calls). Each
call's outcome, after its retries, is counted in the metrics under its tool's name when the turn
offered it (the model may write any name; a label must stay bounded).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from application.errors import ToolCallFailed
from application.ports.tracing import NO_TRACER, SpanName, Tracer
from application.ports.turn_metrics import UNKNOWN_TOOL
from domain.tools.calls import RetryPolicy, ToolCall, ToolFailure, ToolResult, failure_result

if TYPE_CHECKING:
    from collections.abc import Collection, Sequence

    from application.ports.tools import Invokes
    from application.ports.turn_metrics import TurnMetrics

log = logging.getLogger(__name__)


class ToolExecutor:
    def __init__(
        self, toolbox: Invokes, policy: RetryPolicy, timeout: float, metrics: TurnMetrics, offered: Collection[str],
        tracer: Tracer = NO_TRACER, unbounded: Collection[str] = (),
    ) -> None:
        """`unbounded`: the tools that bound their own time (a workflow's run), which `timeout` leaves be."""
        self._toolbox = toolbox
        self._policy = policy
        self._timeout = timeout
        self._metrics = metrics
        self._offered = offered
        self._tracer = tracer
        self._unbounded = unbounded

    async def run_all(self, calls: Sequence[ToolCall], sequential: Collection[str] = ()) -> list[ToolResult]:
        """The calls of one round; results keep call order.

        They are independent by construction: the model wrote them all before it could see any
        result, so none can depend on another's output. They run at the same time, except those
        of tools named in `sequential` (tools that change something): these run one after
        another, in the model's order, after the concurrent ones.
        """
        results: dict[int, ToolResult] = {}
        together = [(i, c) for i, c in enumerate(calls) if c.name not in sequential]
        for (index, _), result in zip(together, await asyncio.gather(*(self.run(c) for _, c in together)), strict=True):
            results[index] = result
        for index, call in enumerate(calls):
            if call.name in sequential:
                results[index] = await self.run(call)
        return [results[index] for index in range(len(calls))]

    async def run(self, call: ToolCall) -> ToolResult:
        tool = call.name if call.name in self._offered else UNKNOWN_TOOL
        with self._tracer.span(SpanName.TOOL_CALL, tool=call.name, call_id=call.id) as span:
            result = await self._run(call)
            outcome = result.failure.value if result.failure else "ok"
            span.set(outcome=outcome)
            if result.failure is not None:
                span.fail(outcome)
        self._metrics.tool_call(tool, outcome)
        return result

    async def _run(self, call: ToolCall) -> ToolResult:
        attempt = 1
        while True:
            failure, detail = await self._attempt(call)
            if failure is None:
                return ToolResult(call.id, call.name, detail)
            if not self._policy.should_retry(failure, attempt):
                return failure_result(call, failure, detail)
            attempt += 1
            await asyncio.sleep(self._policy.retry_delay)

    async def _attempt(self, call: ToolCall) -> tuple[ToolFailure | None, str]:
        """(None, output) on success, else (failure, detail)."""
        if call.has_unparseable_arguments:
            return ToolFailure.INVALID_ARGUMENTS, "they are not a valid JSON object"
        try:
            timeout = None if call.name in self._unbounded else self._timeout
            return None, await asyncio.wait_for(self._toolbox.invoke(call), timeout)
        except TimeoutError:
            return ToolFailure.TIMEOUT, f"no answer within {self._timeout:g} s"
        except ToolCallFailed as failed:
            return failed.failure, failed.detail
        except Exception as error:  # a tool's own bug must not crash the turn
            log.warning("tool %s raised %s", call.name, type(error).__name__, exc_info=True)
            return ToolFailure.FAILED, "an unexpected error inside the tool"
