"""`--llm` of tests/bench/user_memory.py: the memory upkeep's model bill of the user-memory scenario with
an LLM, before and after issue 21, in the same run.

The scenario is played with provider `openai` against the OpenAI-protocol test server
(tests/llm_server.py), which answers every call from memagent's offline memory models
(tests/bench/upkeep_accounting.py), so that recall can be scored as offline: SQLite, the lexical
embedder. `before`: an upkeep after every turn, with a summary call and an entity call (the user facts
come from the entity call); `after`: the default rule with an LLM (lazy: `upkeep_every_turns`,
`upkeep_token_budget`, `upkeep_idle_seconds`), one digest call for the summary and the entities, user
facts included. Each conversation's waiting turns are upkept when it ends (its idle delay runs out
between conversations). The server tells calls apart by their system prompt and counts each one's
prompt tokens: upkeep (digest, summary, entities, archive), chat, and titles, which are neither.

Targets (issue 21), for `after`: <= 0.5 upkeep calls per turn, upkeep prompt tokens <= 25% of the
chat's, and recall unchanged: >= 90% of the questions with the fact's latest value in the prompt (and
no fewer than `before`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from infrastructure.runtime.tiktoken_tokenizer import TiktokenTokenizer
from interfaces.settings.settings import Settings
from interfaces.wiring.container import Container
from tests.bench.upkeep_accounting import OfflineMemoryModel, bill, split_digest
from tests.llm_server import ScriptedLLMServer

Prepare = Callable[[Container], None]
# The scenario played with settings overrides and a provider override: its recall and prompt tokens.
Scenario = Callable[[dict[str, Any], Prepare | None], Awaitable[dict[str, Any]]]

MODES: dict[str, tuple[dict[str, Any], Prepare | None]] = {
    "before": ({"upkeep_every_turns": 1, "upkeep_idle_seconds": 0}, split_digest),
    "after": ({}, None),  # the settings' defaults
}
CALLS_PER_TURN = 8  # scripts queued per turn: far more than a turn's chat, title and upkeep calls


async def llm_upkeep(scenario: Scenario, turns: int) -> dict[str, Any]:
    """Both modes' bills, recall and prompt tokens, and the targets."""
    count = TiktokenTokenizer(Settings().tokenizer_encoding).count
    report: dict[str, Any] = {}
    with ScriptedLLMServer() as server:
        for mode, (memory, prepare) in MODES.items():
            server.reset()
            server.enqueue(*[OfflineMemoryModel()] * (turns * CALLS_PER_TURN))
            llm = {"provider": "openai", "base_url": server.base_url, "api_key": "sk-bench", "max_retries": 0}
            played = await scenario({"llm": llm, "memory": {"backend": "inprocess", **memory}}, prepare)
            assert server.pending_scripts > 0, "the server ran out of scripts: some calls got the plain echo"
            recall = played["recall"]
            report[mode] = {
                **bill(server.chat_requests, count, turns),
                "recall_share": recall["latest_share"], "missed": recall["missed"], "stale": recall["stale"],
                "found_in": recall["found_in"], "question_prompt_tokens": played["prompt_tokens"]["memagent_total"],
            }
    report["targets"] = targets(report["before"], report["after"])
    return report


def targets(before: dict[str, Any], after: dict[str, Any]) -> dict[str, dict[str, Any]]:
    per_turn, share = after["upkeep_calls_per_turn"], after["upkeep_tokens_over_chat_tokens"]
    recall = after["recall_share"]
    goals = {
        "upkeep_calls_per_turn_at_most_0.5": (per_turn, per_turn <= 0.5),
        "upkeep_tokens_at_most_0.25_of_chat": (share, share <= 0.25),
        "recall_share_at_least_0.9": (recall, recall >= 0.9),
        "recall_share_not_below_before": (recall, recall >= before["recall_share"]),
    }
    return {name: {"value": value, "met": met} for name, (value, met) in goals.items()}
