"""Timing for the benchmarks: works timed in turns (so a busy machine slows them all alike) and
percentiles of the times."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable


async def timed(works: list[Callable[[], Awaitable[Any]]], runs: int) -> list[list[float]]:
    """Each work's times in ms, the works taking turns, after a warm-up (connections, statement
    caches, pages in memory, a model's first call)."""
    for _ in range(max(3, runs // 10)):
        for work in works:
            await work()
    times: list[list[float]] = [[] for _ in works]
    for _ in range(runs):
        for work, spent in zip(works, times, strict=True):
            started = time.perf_counter()
            await work()
            spent.append((time.perf_counter() - started) * 1000)
    return times


def percentile(times: list[float], share: float) -> float:
    ordered = sorted(times)
    return round(ordered[min(len(ordered) - 1, int(len(ordered) * share))], 3)
