"""The gauges of tests/bench/server_peers.py: a server's process tree (the process and its children,
looked up again at each reading, so that a worker started meanwhile counts), its CPU (each process's
CPU clock, in ns) and RSS (/proc), waits until it is quiet, the figures of a list of turn times, and
memagent's ratios to its peers with the targets of issue 39."""

from __future__ import annotations

import asyncio
import contextlib
import statistics
import time
from typing import Any

from tests.bench.processes import process_tree
from tests.bench.sse_probe import total_rss_mb

EDGE = 20  # turns in the early and in the late window (turns 1–20 against the last 20)
TENTHS = 200  # turns from which each tenth's p50 is reported too


class Tree:
    """A server's processes: CPU counted for every process seen once, even after it exited."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.last_ns: dict[int, int] = {}

    def pids(self) -> list[int]:
        return sorted(set(process_tree(self.pid)) | self.last_ns.keys())

    def cpu_ns(self) -> int:
        """CPU of the tree in ns: each process's CPU clock (all its threads, exited ones included), or
        the last reading of a process gone since."""
        for pid in self.pids():
            with contextlib.suppress(OSError):  # exited: its last reading stands
                self.last_ns[pid] = time.clock_gettime_ns(process_cpu_clock(pid))
        return sum(self.last_ns.values())

    def cpu_s(self) -> float:
        return self.cpu_ns() / 1e9

    def rss_mb(self) -> float:
        return total_rss_mb(self.pids())


def process_cpu_clock(pid: int) -> int:
    """The clock id of a process's CPU time (Linux's MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED), which
    clock_getcpuclockid(3) returns and Python does not wrap): ns, where /proc's stat has clock ticks."""
    return ((~pid) << 3) | 2


async def quiet(tree: Tree, window: float = 0.03, busy_share: float = 0.05, limit: float = 2.0) -> float:
    """Until the tree used under `busy_share` of a core over `window` s (what a server does right after
    a turn must not land in another server's turn); returns the seconds waited."""
    began = time.monotonic()
    before = tree.cpu_ns()
    while time.monotonic() - began < limit:
        await asyncio.sleep(window)
        now = tree.cpu_ns()
        if now - before < busy_share * window * 1e9:
            break
        before = now
    return round(time.monotonic() - began, 3)


async def idle(tree: Tree, window: float = 1.0, busy_share: float = 0.03, limit: float = 60.0) -> tuple[float, float]:
    """Until the tree's CPU stopped rising (under `busy_share` of a core) for `window` s: its title,
    upkeep and whatever else follows the turns done. Returns the seconds waited and the tree's CPU
    seconds at the start of that quiet window (the quiet window itself is left out)."""
    began = time.monotonic()
    before = tree.cpu_s()
    while time.monotonic() - began < limit:
        await asyncio.sleep(window)
        now = tree.cpu_s()
        if now - before < busy_share * window:
            break
        before = now
    return round(time.monotonic() - began - window, 2), before


async def idle_rate(tree: Tree, seconds: float) -> float:
    """CPU ms per second the tree spends doing nothing (pollers, timers), over `seconds`."""
    before = tree.cpu_s()
    await asyncio.sleep(seconds)
    return round((tree.cpu_s() - before) * 1000 / seconds, 3)


def wall_figures(times_ms: list[float]) -> dict[str, Any]:
    """p50/p90/mean of all turns, p50/mean of the first and the last EDGE turns, and from TENTHS turns
    on the p50 of each tenth of them: 20 turns at each end of a long run are few enough for one slow
    stretch of the machine to move their ratio, where the tenths show whether a cost grows."""
    edge = max(1, min(EDGE, len(times_ms) // 2))
    early, late = times_ms[:edge], times_ms[-edge:]
    ordered = sorted(times_ms)
    tenths = {}
    if len(times_ms) >= TENTHS:
        size = len(times_ms) // 10
        tenths = {"by_tenth_p50": [round(statistics.median(times_ms[i * size:(i + 1) * size]), 2) for i in range(10)]}
    return {
        "p50": round(statistics.median(times_ms), 2),
        "p90": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))], 2),
        "mean": round(statistics.mean(times_ms), 2),
        "edge_turns": edge,
        "early_p50": round(statistics.median(early), 2),
        "late_p50": round(statistics.median(late), 2),
        "early_mean": round(statistics.mean(early), 2),
        "late_mean": round(statistics.mean(late), 2),
        "late_over_early_p50": round(statistics.median(late) / statistics.median(early), 3),
        **tenths,
    }


def ratios(report: dict[str, Any], scenario: str) -> dict[str, Any]:
    """memagent's figures over each peer's, and the targets of issue 39 that this scenario measures."""
    mine = report.get("memagent")
    if not mine:
        return {}
    out: dict[str, Any] = {}
    for peer in ("langgraph", "relay"):
        if peer not in report:
            continue
        theirs = report[peer]
        out[f"memagent_over_{peer}"] = {
            "wall_p50": round(mine["wall_ms"]["p50"] / theirs["wall_ms"]["p50"], 3),
            "wall_late_p50": round(mine["wall_ms"]["late_p50"] / theirs["wall_ms"]["late_p50"], 3),
            "cpu_per_turn_gross": round(mine["cpu_ms_per_turn_gross"] / theirs["cpu_ms_per_turn_gross"], 3),
            "cpu_per_turn_net": round(mine["cpu_ms_per_turn_net"] / max(theirs["cpu_ms_per_turn_net"], 1e-3), 3),
        }
    out["targets"] = targets(out, mine, scenario)
    return out


def targets(out: dict[str, Any], mine: dict[str, Any], scenario: str) -> dict[str, Any]:
    lg, relay = out.get("memagent_over_langgraph"), out.get("memagent_over_relay")
    found: dict[str, Any] = {}
    if scenario == "long" and lg:
        found["cpu_per_turn_at_most_0.25x_langgraph"] = lg["cpu_per_turn_net"] <= 0.25
    if scenario.startswith("fresh"):
        if lg:
            found["cpu_per_turn_at_most_0.6x_langgraph"] = lg["cpu_per_turn_net"] <= 0.6
        if relay:
            found["wall_p50_at_most_1.5x_relay"] = relay["wall_p50"] <= 1.5
            found["cpu_per_turn_at_most_3x_relay"] = relay["cpu_per_turn_net"] <= 3
    if scenario in ("long", "fresh-same"):  # flat as the conversation, or the user's memory, grows
        found["late_at_most_1.2x_early"] = mine["wall_ms"]["late_over_early_p50"] <= 1.2
        found["cpu_late_at_most_1.2x_early"] = mine["cpu_ms_of_turn_until_quiet"]["late_over_early_p50"] <= 1.2
    return found
