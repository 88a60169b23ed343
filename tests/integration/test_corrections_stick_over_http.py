"""Corrections that stick (issue 35, item 7), over real HTTP: each user of the corrections test set
(tests/memory_corrections.py) states a fact of every kind in one conversation and corrects each in a
later one; a new conversation's prompt then holds the latest values (at least 90%), no superseded one
is kept as current (in the prompt or the user memory API), each latest value is current under its
kind's type with the old one in its history, and the held-out quarter scores within 5 points of the
rest. On the embedded default (the offline rule-based extractor; the prompt is the turn's snapshot)
and on the LLM path (the upkeep's digest answered by a good model; the prompt is the one the
OpenAI-protocol server got). Both services are started side by side; users play three at a time.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.integration.corrections_world import EMBEDDED, corrections_worlds, llm_settings, received_system, scored
from tests.integration.user_memory_world import World
from tests.llm_server import ScriptedLLMServer
from tests.memory_corrections import PAIRS
from tests.memory_corrections_model import good_model, is_digest, text_of

pytestmark = pytest.mark.integration

PARALLEL = 3  # users at a time


@pytest.fixture(scope="module")
def worlds(
    tmp_path_factory: pytest.TempPathFactory, shared_server: ScriptedLLMServer
) -> Iterator[tuple[World, World]]:
    shared_server.answer_by(good_model)
    try:
        with corrections_worlds(tmp_path_factory.mktemp("corrections"), EMBEDDED,
                                llm_settings(shared_server.base_url)) as (embedded, llm):
            yield embedded, llm
    finally:
        shared_server.answer_by(None)


def assert_targets(report: dict[str, Any]) -> None:
    development, held_out = report["development"], report["held_out"]
    assert held_out["pairs"] == len(PAIRS) // 4, "a quarter of the pairs is held out"
    for half in (development, held_out):
        assert half["latest_share"] >= 0.9, report
        assert half["stale"] == 0, report
        assert half["in_slot_with_history"] >= 0.9 * half["pairs"], report
    assert abs(development["latest_share"] - held_out["latest_share"]) <= 0.05, report


def test_corrections_on_the_embedded_default_supersede_the_facts_they_correct_in_a_new_conversation(
    worlds: tuple[World, World],
) -> None:
    embedded, _ = worlds
    assert_targets(scored(embedded, parallel=PARALLEL))


def test_the_llm_extraction_path_gives_a_correction_the_type_of_the_fact_it_corrects(
    worlds: tuple[World, World], shared_server: ScriptedLLMServer
) -> None:
    _, llm = worlds
    assert_targets(scored(llm, received_system(shared_server), PARALLEL))
    # The correction's digest was shown the user's fact from the earlier conversation, to name its type.
    [job] = [p for p in PAIRS if p.id == "job-0"]
    asks = [text_of(r.messages[-1]["content"]).partition("New exchanges:") for r in shared_server.chat_requests
            if is_digest(r.body)]
    [shown] = [before for before, _, exchanges in asks if job.correction in exchanges]
    assert f"- job: {job.old}" in shown
