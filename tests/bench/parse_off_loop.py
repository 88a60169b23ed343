"""How long the event loop stalls while a megabyte of model output is parsed (issue 36): in place,
and through `application.off_loop.parsed` (a worker thread past OFF_LOOP_CHARS).

    python -m tests.bench.parse_off_loop

A heartbeat task sleeps 1 ms at a time while each parser reads its text ROUNDS times; its worst gap
between beats is the longest the loop could not answer anything else. A worker thread frees the
loop between the parser's steps in Python (the scripted model's markers); a single long call into
C (`json.loads`, one regex search) holds the GIL to its end, in a thread as on the loop, so
there the gap stays about that call's length.

Prints JSON: for each parser, the text's size and the worst gap in ms in place and off the loop.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

from application.off_loop import parsed
from domain.conversations import structured_output
from domain.tools import react
from domain.tools.calls import parse_arguments
from infrastructure.models import scripted_model

SIZE = 1024 * 1024
ROUNDS = 5
BEAT_S = 0.001


def long_outputs(size: int) -> dict[str, tuple[Callable[[str], object], str]]:
    """Each parser of a model's output, with a long text of its kind."""
    return {
        "parse_react_output (a long thought, then an action)": (
            lambda text: react.parse_react_output(text, "call_1"),
            "I think. " * (size // 9) + '\n```json\n{"name": "now", "args": {}}\n```',
        ),
        "parsed_answer (a structured answer)": (
            structured_output.parsed_answer, json.dumps({"items": ["a b c"] * (size // 10)}),
        ),
        "parse_arguments (a tool call's arguments)": (parse_arguments, json.dumps({"values": [1.5] * (size // 5)})),
        "tool_request (scripted model, repeated marker openings)": (
            scripted_model.tool_request, "[[tool:a {" * (size // 10),
        ),
    }


async def worst_gap_ms(parse: Callable[[str], object], text: str, off_loop: bool) -> float:
    gaps: list[float] = []
    done = asyncio.Event()

    async def heartbeat() -> None:
        last = time.perf_counter()
        while not done.is_set():
            await asyncio.sleep(BEAT_S)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    beating = asyncio.create_task(heartbeat())
    await asyncio.sleep(BEAT_S * 5)
    for _ in range(ROUNDS):
        if off_loop:
            await parsed(parse, text)
        else:
            parse(text)
            await asyncio.sleep(BEAT_S * 2)
    done.set()
    await beating
    return round(max(gaps) * 1000, 1)


async def figures() -> dict[str, Any]:
    rows = {}
    for name, (parse, text) in long_outputs(SIZE).items():
        rows[name] = {"kib": len(text) // 1024, "in_place_ms": await worst_gap_ms(parse, text, off_loop=False),
                      "off_loop_ms": await worst_gap_ms(parse, text, off_loop=True)}
    return {"heartbeat_ms": BEAT_S * 1000, "rounds": ROUNDS, "worst_gap": rows}


def main() -> dict[str, Any]:
    return asyncio.run(figures())


if __name__ == "__main__":
    print(json.dumps(main(), indent=2, ensure_ascii=False))
