"""No ReDoS (issues 14 and 36): how the CPU time of every regex applied to user text, model output
or tool output (the offline memory models, the ReAct parser, the scripted model's markers, and the
other modules named in PATTERNS), and of their public functions on whole inputs, grows with
adversarial text: a user's, and a model's (MODEL_OUTPUT).

    python -m tests.bench.regex_growth

Each job (a pattern's scan, or a public function) reads each adversarial text at 32 KiB and the
same recipe at 2 KiB, its peer in the same run: a sixteenth of the size. Linear work grows 16
times, quadratic 256. Both sizes are timed in turns (CPU time of this process, the garbage
collector off, a warm-up first, the best of up to 5 rounds), so a busy machine slows both alike.
A job is superlinear when the whole takes more than FLOOR_MS and more than GROWTH_LIMIT times the
sixteenth (the geometric middle of linear and quadratic, 4 times either way of noise), or more
than CAP_MS at all.

Prints JSON: sizes, the limits, how many texts and jobs, the five slowest jobs on the whole (with
their growth), `superlinear`: the jobs over the limits (the target: none), and `event_loop`: how
long the loop stalls while the parsers of model output read a megabyte (tests/bench/parse_off_loop.py).
"""

from __future__ import annotations

import gc
import json
import re
import time
from collections.abc import Callable
from datetime import date
from functools import partial
from types import ModuleType
from typing import Any

from domain.memory import fact_slots
from domain.memory.summary import SummaryLimit
from domain.tools import react
from infrastructure.embeddings import lexical
from infrastructure.logs import redaction
from infrastructure.memory import entity_patterns, extractive_summarizer, llm_memory_models, rule_entity_extractor
from infrastructure.memory.extractive_summarizer import salience, select, sentences
from infrastructure.memory.rule_entity_extractor import extraction, intent_of, sentence_entities
from infrastructure.models import scripted_model
from tests.bench import parse_off_loop

SIZE = 32 * 1024
SMALL = SIZE // 16
FLOOR_MS = 25.0  # a quadratic scan of 32 KiB takes far longer; noise on the best of 5 rounds never does
GROWTH_LIMIT = 64.0  # linear is 16, quadratic 256
CAP_MS = 1000.0
ROUNDS = 5
TODAY = date(2026, 1, 1)


def repeated(size: int, unit: str, prefix: str = "", suffix: str = "") -> str:
    """`prefix`, then `unit` repeated up to `size` characters in all, then `suffix`."""
    room = size - len(prefix) - len(suffix)
    return prefix + unit * (room // len(unit)) + suffix


def model_output(size: int) -> dict[str, str]:
    """Adversarial model output (a model's text is as untrusted as a user's): openings of the blocks
    that the ReAct parser and the scripted model look for, never closed, or closings never opened."""
    return {f"model output: {name}": repeated(size, unit, prefix) for name, unit, prefix in (
        ("repeated fence openings", "```{", ""),
        ("repeated json fence openings", "```json {", ""),
        ("a fence opening then braces", "{", "```json"),
        ("fence closings", "} ```", ""),
        ("repeated tool markers with arguments", "[[tool:a {", ""),
        ("repeated tool markers with spaced arguments", "[[tool:a.b-c  {", ""),
        ("a tool marker then braces", "{", "[[tool:a "),
        ("marker closings", "}]]", ""),
        ("a tool marker then a long name", "a", "[[tool:"),
    )}


def adversarial(size: int) -> dict[str, str]:
    """The adversarial texts of at most `size` characters: a user's, then a model's."""
    run_of = partial(repeated, size)
    return model_output(size) | {
        "one long word": run_of("x"),
        "one long capitalised word": run_of("X"),
        "a long word of letters and digits": run_of("a1"),
        "repeated a-dot": run_of("a."),
        "repeated a-dot then an at sign": run_of("a.", suffix="@"),
        "at signs": run_of("@"),
        "x-at pairs": run_of("x@"),
        "an address with a long domain": run_of(".x", prefix="x@x", suffix="."),
        "hyphens": run_of("-"),
        "digits": run_of("1"),
        "digit-hyphen pairs": run_of("1-"),
        "a phone prefix then digits and spaces": run_of(" 1", prefix="+1", suffix="x"),
        "nested brackets": "(" * (size // 2) + ")" * (size // 2),
        "spaces": run_of(" "),
        "tabs": run_of("\t"),
        "newlines": run_of("\n"),
        "dots": run_of("."),
        "apostrophes": run_of("'"),
        "capital-apostrophe pairs": run_of("A'"),
        "one-letter words": run_of("a "),
        "capitalised words": run_of("Ab "),
        "repeated my": run_of("my "),
        "my then a long word": run_of("x", prefix="my "),
        "a clause then a long run of spaces": run_of(" ", prefix="I like a", suffix="b"),
        "a name then a long run of spaces": run_of(" ", prefix="My name is Ada", suffix="#"),
        "a clause then commas and spaces": run_of(", ", prefix="I like a", suffix="b"),
        "repeated clause openers": run_of("I like x "),
        "repeated thing openers": run_of("I play the x "),
        "a thing opener then a long word": run_of("x", prefix="I'm learning "),
        "a thing opener then stop words": run_of(" in", prefix="I play x"),
        "a city then a long run of spaces": run_of(" ", prefix="I moved to Hangzhou last", suffix="#"),
        "a city then repeated time phrases": run_of(" last month", prefix="I moved to Hangzhou"),
        "repeated pet names": run_of("a cat called Miso "),
        "repeated our": run_of("our "),
        "repeated requests": run_of("tell me "),
        "repeated greetings then a request": run_of("ok, ", suffix="tell me"),
        "repeated 我的": run_of("我的"),
        "我的 then 是 runs": run_of("我的猫是"),
        "我最喜欢的 then CJK characters": run_of("城", prefix="我最喜欢的"),
        "CJK characters": run_of("我"),
        "a fence then spaces": run_of(" ", prefix="```"),
        "a json fence then newlines": run_of("\n", prefix="```json"),
        "backticks": run_of("`"),
    }


def patterns_of(module: ModuleType) -> dict[str, re.Pattern[str]]:
    """Every compiled regex at the top of `module`, also inside tuples of patterns."""
    found: dict[str, re.Pattern[str]] = {}
    for name, value in vars(module).items():
        if isinstance(value, re.Pattern):
            found[f"{module.__name__}.{name}"] = value
        elif isinstance(value, tuple):
            for index, item in enumerate(value):
                row = item if isinstance(item, tuple) else (item,)
                for part in row:
                    if isinstance(part, re.Pattern):
                        found[f"{module.__name__}.{name}[{index}]"] = part
    return found


def all_patterns(*modules: ModuleType) -> dict[str, re.Pattern[str]]:
    """The patterns of `modules`, each once (a module that imports another's is named by the first)."""
    found: dict[str, re.Pattern[str]] = {}
    for module in modules:
        for name, pattern in patterns_of(module).items():
            if all(pattern is not seen for seen in found.values()):
                found[name] = pattern
    return found


PATTERNS = all_patterns(entity_patterns, rule_entity_extractor, extractive_summarizer, llm_memory_models, lexical,
                        react, scripted_model, fact_slots, redaction)
PUBLIC: dict[str, Callable[[str], object]] = {
    "extraction": lambda text: extraction(text, TODAY),
    "sentence_entities": lambda text: sentence_entities(text, TODAY),
    "intent_of": lambda text: intent_of(text, []),
    "salience": lambda text: salience.__wrapped__(text),  # not the cached answer
    "sentences": sentences,
    "select": lambda text: select(sentences(text), SummaryLimit()),
    "parse_react_output": lambda text: react.parse_react_output(text, "call_1"),
    "tool_marker": scripted_model.tool_marker,
    "plain_value": fact_slots.plain_value,
}


def finds(pattern: re.Pattern[str]) -> Callable[[str], object]:
    return lambda text: list(pattern.finditer(text))


def jobs() -> dict[str, Callable[[str], object]]:
    """Every pattern's scan and every public function, by name."""
    return {**{label: finds(pattern) for label, pattern in PATTERNS.items()}, **PUBLIC}


def cpu_ms(work: Callable[[], object]) -> float:
    """One run's CPU time, the garbage collector off: a full collection set off by the whole text's
    match objects (the process holds the app's modules) would count as the job's growth."""
    gc.disable()
    try:
        started = time.process_time()
        work()
        return (time.process_time() - started) * 1000
    finally:
        gc.enable()


def growth(work: Callable[[str], object], small: str, whole: str) -> tuple[float, float]:
    """The best CPU ms of `work` on `small` and on `whole`, timed in turns after a warm-up."""
    work(small)
    work(whole)
    best_small = best_whole = float("inf")
    for _ in range(ROUNDS):
        best_small = min(best_small, cpu_ms(partial(work, small)))
        best_whole = min(best_whole, cpu_ms(partial(work, whole)))
        if best_whole <= FLOOR_MS or best_whole > CAP_MS:
            break
    return best_small, best_whole


def is_superlinear(small_ms: float, whole_ms: float) -> bool:
    return whole_ms > CAP_MS or (whole_ms > FLOOR_MS and whole_ms > GROWTH_LIMIT * small_ms)


def main() -> dict[str, Any]:
    started = time.perf_counter()
    smalls, wholes, every_job = adversarial(SMALL), adversarial(SIZE), jobs()
    rows = []
    for text, whole in wholes.items():
        for job, work in every_job.items():
            small_ms, whole_ms = growth(work, smalls[text], whole)
            rows.append({"text": text, "job": job, "small_ms": round(small_ms, 3), "whole_ms": round(whole_ms, 3),
                         "growth": round(whole_ms / max(small_ms, 0.001), 1),
                         "superlinear": is_superlinear(small_ms, whole_ms)})
    return {
        "size_kib": SIZE // 1024, "small_kib": SMALL // 1024, "floor_ms": FLOOR_MS, "growth_limit": GROWTH_LIMIT,
        "cap_ms": CAP_MS, "texts": len(wholes), "jobs": len(every_job),
        "slowest": sorted(rows, key=lambda row: -row["whole_ms"])[:5],
        "superlinear": [row for row in rows if row["superlinear"]],
        "event_loop": parse_off_loop.main(),
        "seconds": round(time.perf_counter() - started, 1),
    }


if __name__ == "__main__":
    print(json.dumps(main(), indent=2, ensure_ascii=False))
