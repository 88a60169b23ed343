"""The user-memory benchmark runs in quick mode, with `--llm`, and prints well-formed JSON; no superseded
value is shown as current. Timings, the recall shares and the upkeep's targets are not asserted (they
are targets of the full run)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from tests.service import ROOT, service_env

pytestmark = pytest.mark.integration

EMBEDDERS = ("lexical", "local")
BACKENDS = ("sqlite", "postgres")
TIMINGS = ("recall", "conversation_only", "sql_read", "user_facts", "similar", "embed_query")
TARGETS = {
    "latest_share_local_at_least_0.95", "latest_share_lexical_at_least_0.85", "stale_questions_0",
    "prompt_saving_vs_full_history_at_least_0.9", "recall_p50_sqlite_lexical_under_10_ms",
}
LLM_TARGETS = {
    "upkeep_calls_per_turn_at_most_0.5", "upkeep_tokens_at_most_0.25_of_chat", "recall_share_at_least_0.9",
    "recall_share_not_below_before",
}


def check_score(score: dict[str, Any], questions: int) -> None:
    assert score["questions"] == questions
    assert score["latest"] == questions - len(score["missed"])
    assert score["latest_share"] == round(score["latest"] / questions, 4)
    assert sum(score["found_in"].values()) == score["latest"]
    assert {m["fact"] for m in score["misses"]} == set(score["missed"])
    assert all(m["why"].split(":")[0] in {"extraction", "ranking", "budget"} for m in score["misses"])
    # The hard target that is no timing: a superseded value never reaches the facts section.
    assert (score["stale"], score["stale_values"]) == (0, []), score


def check_llm_upkeep(section: dict[str, Any], turns: int) -> None:
    before, after = section["before"], section["after"]
    # Every turn is one chat call, before and after; before, each is upkept with a summary and an entity call.
    assert before["calls"]["chat"] == after["calls"]["chat"] == turns
    assert before["calls"]["summary"] == before["calls"]["entities"] == turns
    # After, one digest call covers the summary and the entities (the user facts too), for several turns.
    assert set(after["calls"]) <= {"chat", "title", "digest", "archive"}, after["calls"]
    assert 0 < after["calls"]["digest"] < turns
    for bill in (before, after):
        assert bill["stale"] == 0
        upkeep = sum(n for p, n in bill["calls"].items() if p in {"digest", "summary", "entities", "archive"})
        assert bill["upkeep_calls_per_turn"] == round(upkeep / turns, 3)
    assert set(section["targets"]) == LLM_TARGETS
    assert all(isinstance(t["met"], bool) for t in section["targets"].values())


def test_the_quick_user_memory_benchmark_shows_no_stale_fact_and_prints_well_formed_json() -> None:
    # One torch thread: on a small CI machine the model's threads only contend with the event loop.
    done = subprocess.run(
        [sys.executable, "-m", "tests.bench.user_memory", "--quick", "--llm"],
        cwd=ROOT, env=service_env({"OMP_NUM_THREADS": "1"}), capture_output=True, text=True, timeout=600, check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    plan = report["plan"]
    assert (report["mode"], plan["conversations"], plan["facts"], plan["questions"]) == ("quick", 12, 40, 40)
    assert (plan["corrected"], plan["chinese"], plan["paraphrased"], plan["earlier_conversations"]) == (10, 5, 20, 100)
    for embedder in EMBEDDERS:
        measured = report[embedder]
        check_score(measured["recall"], 40)
        check_score(measured["with_earlier"], 40)
        assert (measured["with_earlier"]["conversations"], measured["with_earlier"]["items"]) == (100, 200)
        # The script and the offline memory are deterministic: every backend scores alike.
        assert measured["backends_agree"] is True
        tokens = measured["prompt_tokens"]
        assert 0 < tokens["memagent_total"] < tokens["full_history_total"]
        assert tokens["saving"] == round(1 - tokens["memagent_total"] / tokens["full_history_total"], 4)
        for backend in BACKENDS:
            timings = measured[backend]
            assert timings["runs"] == 20
            assert timings["items_read"] >= 200
            assert all(isinstance(timings[f"{t}_{p}_ms"], float) for t in TIMINGS for p in ("p50", "p99")), timings
    assert set(report["targets"]) == TARGETS
    assert report["targets"]["stale_questions_0"] == {"value": 0, "met": True}
    assert all(isinstance(t["met"], bool) for t in report["targets"].values())
    check_llm_upkeep(report["llm_upkeep"], plan["turns"] + plan["questions"])
