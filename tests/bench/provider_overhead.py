"""What OpenAIChatModel costs on top of the bare openai SDK, and whether tool calls run concurrently.

    python -m tests.bench.provider_overhead [--quick]

Both sides read the same 50-chunk stream, with no delay between chunks, from the project's
OpenAI-protocol test server over real HTTP, in alternating turns so that drift hits both
alike. Prints one JSON object: per-turn and per-chunk medians for both, their ratio (target
below 1.3), and the wall time of one model-requested round of two 1 s tool calls (about 1 s
when they run concurrently, 2 s if they did not).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections.abc import Awaitable, Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from openai import AsyncOpenAI

from application.chat_turn.tool_executor import ToolExecutor
from domain.conversations.messages import Role, text_msg
from domain.tools.calls import RetryPolicy, ToolCall, ToolSpec
from infrastructure.metrics.inprocess_metrics import InProcessMetrics
from infrastructure.models.openai_chat_model import OpenAIChatModel
from infrastructure.models.provider_config import ProviderConfig
from tests.llm_server import ScriptedLLMServer
from tests.llm_server_scripts import call, text, tool_calls

CHUNKS = 50
TARGET_RATIO = 1.3
AT = datetime(2026, 1, 1, tzinfo=UTC)
MESSAGES = [text_msg("s", Role.SYSTEM, "Be brief.", AT), text_msg("u", Role.USER, "Tell me a story.", AT)]
WIRE_MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Tell me a story."}]
SLOW_TOOL = ToolSpec("slow_tool", "Takes one second.")


async def adapter_turn(model: OpenAIChatModel) -> int:
    return len([chunk async for chunk in model.stream(MESSAGES, []) if chunk.text])


async def bare_turn(client: AsyncOpenAI) -> int:
    stream = await client.chat.completions.create(
        model="gpt-4o-mini",
        messages=WIRE_MESSAGES,
        temperature=0.7,  # type: ignore[arg-type]
        stream=True,
        stream_options={"include_usage": True},
    )
    return len([chunk async for chunk in stream if chunk.choices and chunk.choices[0].delta.content])


async def timed(turn: Callable[[], Awaitable[int]]) -> float:
    started = time.perf_counter()
    assert await turn() == CHUNKS
    return time.perf_counter() - started


async def overhead(server: ScriptedLLMServer, turns: int) -> dict[str, Any]:
    model = OpenAIChatModel(ProviderConfig("gpt-4o-mini", base_url=server.base_url, api_key="bench"))
    client = AsyncOpenAI(base_url=server.base_url, api_key="bench", max_retries=0)
    story = [f"w{i} " for i in range(CHUNKS)]
    times: dict[str, list[float]] = {"adapter": [], "bare": []}
    for index in range(turns + 2):  # the first round of each warms up connections and imports
        server.enqueue(text(*story), text(*story))
        adapter, bare = await timed(lambda: adapter_turn(model)), await timed(lambda: bare_turn(client))
        if index >= 2:
            times["adapter"].append(adapter)
            times["bare"].append(bare)
        server.reset()  # keep the server's request log from growing over the run
    await model.aclose()
    await client.close()
    result = {name: _summary(values) for name, values in times.items()}
    ratio = result["adapter"]["per_turn_ms"] / result["bare"]["per_turn_ms"]
    return {**result, "ratio": round(ratio, 3), "target_ratio": TARGET_RATIO, "within_target": ratio < TARGET_RATIO}


def _summary(seconds: list[float]) -> dict[str, float]:
    median = statistics.median(seconds)
    return {
        "per_turn_ms": round(median * 1000, 3),
        "per_chunk_us": round(median / CHUNKS * 1e6, 2),
        "p90_turn_ms": round(statistics.quantiles(seconds, n=10)[-1] * 1000, 3),
    }


class SleepingToolBox:
    """Each call takes one second, like a slow API."""

    async def invoke(self, call: ToolCall) -> str:
        await asyncio.sleep(1.0)
        return "done"


async def concurrent_tools(server: ScriptedLLMServer) -> dict[str, Any]:
    """One round as the agent loop runs it: the model asks for two calls, the executor runs them."""
    server.enqueue(tool_calls(call(SLOW_TOOL.name, {"n": 1}), call(SLOW_TOOL.name, {"n": 2}), pieces=3))
    model = OpenAIChatModel(ProviderConfig("gpt-4o-mini", base_url=server.base_url, api_key="bench"))
    started = time.perf_counter()
    calls = [c for chunk in [c async for c in model.stream(MESSAGES, [SLOW_TOOL])] for c in chunk.tool_calls]
    executor = ToolExecutor(SleepingToolBox(), RetryPolicy(), timeout=5.0, metrics=InProcessMetrics(), offered=())
    results = await executor.run_all(calls)
    elapsed = time.perf_counter() - started
    await model.aclose()
    assert [r.output for r in results] == ["done", "done"]
    return {"tool_calls": len(calls), "each_tool_s": 1.0, "round_wall_s": round(elapsed, 3)}


async def main(quick: bool) -> Mapping[str, Any]:
    with ScriptedLLMServer() as server:
        return {
            "chunks_per_turn": CHUNKS,
            "turns": 30 if quick else 300,
            "overhead": await overhead(server, 30 if quick else 300),
            "concurrent_tools": await concurrent_tools(server),
        }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="30 turns instead of 300 (a few seconds)")
    print(json.dumps(asyncio.run(main(parser.parse_args().quick)), indent=2))
