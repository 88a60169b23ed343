"""Corrections that stick (issue 35, item 7): the corrections test set over real HTTP, scored by half.

    python -m tests.bench.memory_corrections [--parallel 4]

The test set (tests/memory_corrections.py): statement-and-correction pairs in English and Chinese,
written from templates × values, one pair of each kind per end user; the statements in one
conversation, the corrections in a later one, then a question in a new conversation
(tests/integration/corrections_world.py). Played twice on SQLite + in-process memory:

- `embedded`: the embedded default, the offline scripted model and rule-based extractor; the new
  conversation's prompt is read from its snapshot;
- `llm`: the openai provider against the OpenAI-protocol test server, whose good model
  (tests/memory_corrections_model.py) answers the upkeep's digest; the prompt is the one the server got.

Prints JSON: per run, `development` and `held_out` (the fixed quarter no tuning looks at): pairs,
`latest_in_prompt` (the new conversation's facts section holds the latest value, exactly),
`latest_share`, `stale` (pairs whose superseded value a current fact or the prompt still holds),
`in_slot_with_history` (the latest value current under the kind's type, the old one in its history);
the development half's misses; and `targets`: latest share >= 0.9, stale 0, held-out within 5 points.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.integration.corrections_world import EMBEDDED, corrections_worlds, llm_settings, received_system, scored
from tests.llm_server import ScriptedLLMServer
from tests.memory_corrections import BUNDLES, KINDS, PAIRS
from tests.memory_corrections_model import good_model


def targets(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    dev, held = report["development"], report["held_out"]
    goals = {
        "latest_share_at_least_0.9": (min(dev["latest_share"], held["latest_share"]),
                                      dev["latest_share"] >= 0.9 and held["latest_share"] >= 0.9),
        "stale_0": (dev["stale"] + held["stale"], dev["stale"] + held["stale"] == 0),
        "held_out_within_5_points": (round(abs(dev["latest_share"] - held["latest_share"]), 4),
                                     abs(dev["latest_share"] - held["latest_share"]) <= 0.05),
    }
    return {name: {"value": value, "met": met} for name, (value, met) in goals.items()}


def run(folder: Path, parallel: int) -> dict[str, Any]:
    """Both runs, their services started side by side."""
    with ScriptedLLMServer() as server, corrections_worlds(folder, EMBEDDED, llm_settings(server.base_url)) as (
        embedded, llm,
    ):
        server.answer_by(good_model)
        reports = {"embedded": scored(embedded, parallel=parallel),
                   "llm": scored(llm, received_system(server), parallel)}
    return {name: report | {"targets": targets(report)} for name, report in reports.items()}


def main(parallel: int) -> dict[str, Any]:
    began = time.perf_counter()
    plan = {"pairs": len(PAIRS), "held_out": sum(p.held_out for p in PAIRS), "kinds": len(KINDS),
            "chinese": sum(p.language == "zh" for p in PAIRS), "users": len(BUNDLES)}
    with tempfile.TemporaryDirectory() as folder:
        report = {"plan": plan, **run(Path(folder), parallel)}
    return report | {"seconds": round(time.perf_counter() - began, 2)}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parallel", type=int, default=1, help="users played at once")
    print(json.dumps(main(parser.parse_args().parallel), indent=2, ensure_ascii=False))
