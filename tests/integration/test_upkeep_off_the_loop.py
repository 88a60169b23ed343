"""The offline memory upkeep never holds up the event loop (issue 14, "No ReDoS").

`memagent serve` on the embedded default (SQLite, in-process memory, scripted model, rule-based
extractor, extractive summariser, lexical embedder) takes a 32 KiB query of one long word — the
input that once made the upkeep's regexes run for seconds on the loop. While that turn and its
upkeep run, /healthz is asked again and again from another thread: each answer must come promptly.
"""

from __future__ import annotations

import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from tests.integration.backends import chat, serving

pytestmark = pytest.mark.integration

# One word of 32 KiB. A digit is a summary cue, so the upkeep keeps (a cut of) it: the summary
# appearing says the upkeep has run.
BIG_QUERY = "1" * (32 * 1024)
HEALTHZ_BOUND = 0.5  # seconds; the slow regexes held /healthz for 3.5 s
UPKEEP_LIMIT = 90.0  # seconds for the turn and its upkeep, on a slow 2-core machine
PROBE_EVERY = 0.02


def _big_turn(base_url: str) -> str:
    with httpx.Client(base_url=base_url, timeout=UPKEEP_LIMIT) as client:
        return str(chat(client, BIG_QUERY)["conversation_id"])


def _timed(client: httpx.Client, path: str) -> tuple[float, httpx.Response]:
    started = time.perf_counter()
    response = client.get(path)
    return time.perf_counter() - started, response


def _upkeep_answers(client: httpx.Client, turn: Future[str]) -> list[float]:
    """How long each /healthz (and memory read) took from the turn's end until its upkeep kept the
    query in the summary; stops at the first answer over the bound."""
    seconds: list[float] = []
    deadline = time.monotonic() + UPKEEP_LIMIT
    while max(seconds, default=0.0) <= HEALTHZ_BOUND:
        took, health = _timed(client, "/healthz")
        assert health.status_code == 200
        seconds.append(took)
        if turn.done():
            took, memory = _timed(client, f"/api/conversations/{turn.result()}/memory")
            seconds.append(took)
            if memory.status_code == 200 and str(memory.json()["summary"]).startswith("111"):
                break
        assert time.monotonic() < deadline, "the turn and its upkeep did not finish"
        time.sleep(PROBE_EVERY)
    return seconds


def test_healthz_answers_promptly_while_a_32_kib_one_word_turn_is_kept_in_memory(tmp_path: Path) -> None:
    env = {"MEMAGENT_DATABASE__URL": f"sqlite+aiosqlite:///{tmp_path / 'memagent.db'}"}
    with serving(env, tmp_path, timeout=UPKEEP_LIMIT) as (service, client), ThreadPoolExecutor(1) as pool:
        _timed(client, "/healthz")  # a warm connection: what is measured is the service, not the connect
        turn = pool.submit(_big_turn, service.base_url)
        seconds = _upkeep_answers(client, turn)
        assert max(seconds) <= HEALTHZ_BOUND, f"an answer took {max(seconds):.2f} s while the upkeep ran"
