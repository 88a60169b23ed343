"""Memory that follows the user: facts and earlier conversations in a new conversation's prompt, in-process.

    python -m tests.bench.user_memory [--quick] [--embedders lexical,local] [--backends sqlite,postgres] [--llm]

One end user has 12 conversations over simulated days (conversation k on day 2k - 1; the container's
clock is moved, between turns only) with the offline memory of memagent: the scripted model, the
in-process cache, extractive summaries and the rule-based extractor. In them, 40 facts are planted
(10 corrected in a later conversation, 5 said in Chinese; tests/bench/user_memory_plan.py), then each
is asked about in a NEW conversation, half of the questions paraphrased. Between turns the benchmark
waits for the memory upkeep, as a user's thinking time would allow. Once per embedder (`lexical`, the
default, and `local`, all-MiniLM-L6-v2) and backend (SQLite, and PostgreSQL in a throwaway database).

Prints JSON, per embedder (the scenario's figures from the first backend; `backends_agree` says
whether every backend scored the same):
- `recall`: the share of questions whose system prompt (the turn's prompt snapshot) holds the fact's
  LATEST value, where (`facts`: "Known facts about the user", `earlier`: "From the user's earlier
  conversations"), by route, paraphrase and language; `stale`: questions whose facts section holds a
  superseded value as if current (target 0), and `superseded_in_earlier` (an old value cited as
  context beside the new one; not a target); `misses`: each missed question and why (extraction,
  ranking, budget), from the user facts and the recall index's full ranking;
- `prompt_tokens`: memagent's prompt tokens of the 40 questions against a full history of every
  conversation before each (system prompt, every earlier query and answer, the question);
- `with_earlier`: 1,000 more conversations of the user seeded through the adapters (100 with
  --quick), the 40 questions recalled again directly (`MemoryRecall.recall`);
- `sqlite` / `postgres`: `MemoryRecall.recall` p50/p99 in a new conversation with those conversations,
  against floors of the same run: the recall without user memory (`conversation_only`) and the SQL
  read of the user's items alone (`sql_read`); its parts (`user_facts`, `similar`, `embed_query`).
`targets`: each with its value and whether it is met. Everything but the timings is deterministic.

`--llm` adds `llm_upkeep` (tests/bench/user_memory_llm.py): the scenario with an LLM, the OpenAI-protocol
test server answering from the offline models, before (an upkeep after every turn, a summary call and an
entity call) and after (lazy upkeep, one digest call), in the same run: calls and prompt tokens by
purpose, upkeep calls per turn, upkeep prompt tokens over the chat's, recall; targets <= 0.5 upkeep
calls per turn, <= 25% of the chat's prompt tokens, >= 90% recall.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from dependency_injector import providers

from application.chat_turn.aggregate_turn import aggregate
from application.chat_turn.turn import ChatRequest
from domain.agents.prompt import PLATFORM_RULES, system_text
from domain.conversations.conversation import Conversation, Message, MessageStatus
from domain.ids import ConversationId, MessageId
from infrastructure.runtime.system import SystemClock
from interfaces.lifecycle import start_backends, stop_backends
from interfaces.settings.settings import Settings
from interfaces.wiring.build import build_container
from interfaces.wiring.container import Container
from tests.bench.user_memory_llm import Prepare, llm_upkeep
from tests.bench.user_memory_load import OWNER, USER, pg_database, seed_earlier, time_recall
from tests.bench.user_memory_plan import CONVERSATIONS, FACTS, QUESTION_DAY, asked, conversations
from tests.bench.user_memory_score import Asked, diagnose, score, tokens

START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)  # day 1 of the scenario


class SimulatedClock(SystemClock):
    """The system clock moved forward to the scenario's day; moved only between turns."""

    def __init__(self) -> None:
        self._began, self._day = datetime.now(UTC), 0

    def on_day(self, day: int) -> None:
        self._day = max(self._day, day)

    def now(self) -> datetime:
        return START + timedelta(days=self._day - 1) + (datetime.now(UTC) - self._began)


async def turn(container: Container, query: str, conversation: ConversationId | None) -> Message:
    handle = await container.start_turn()(ChatRequest(OWNER, query, conversation, end_user=USER))
    result = await aggregate(container.follow_task()(handle.task_id))
    assert result.status is MessageStatus.NORMAL, result.error
    message = await container.message_store().get_message(MessageId(handle.message_id), OWNER)
    assert message is not None
    await container.memory.upkeep_scheduler().wait_idle()  # the user's thinking time
    return message


async def play(container: Container, settings: Settings, clock: SimulatedClock, quick: bool) -> list[Asked]:
    count = container.tokenizer().count
    system_tokens = count(PLATFORM_RULES) + count(settings.agent.preset_prompt)
    history = 0  # tokens of every query and answer so far, in all conversations
    for index, queries in enumerate(conversations(quick)):
        clock.on_day(2 * index + 1)
        conversation = None
        for query in queries:
            message = await turn(container, query, conversation)
            conversation, history = message.conversation_id, history + count(query) + count(message.answer)
        await container.memory.upkeep_scheduler().flush()  # days pass: the idle delay ran out long ago
    clock.on_day(QUESTION_DAY)
    outcomes = []
    for fact in asked():
        message = await turn(container, fact.question, None)
        await container.memory.upkeep_scheduler().flush()  # a conversation of its own, which then goes idle
        system = "\n".join(b["text"] for b in json.loads(message.prompt)[0]["content"] if b["type"] == "text")
        full = system_tokens + history + count(fact.question)
        outcomes.append(Asked(fact, message.conversation_id, system, message.usage.prompt_tokens, full))
        history += count(fact.question) + count(message.answer)
    return outcomes


async def recalled(container: Container, outcomes: list[Asked]) -> list[Asked]:
    """The questions recalled again directly, in their conversations, as the prompt would have it."""
    config, recall, store = container.default_agent_config(), container.memory.recall(), container.message_store()
    again = []
    for a in outcomes:
        conversation = await store.get_conversation(a.conversation, OWNER)
        assert conversation is not None
        memory = (await recall.recall(conversation, config, a.fact.question, [])).memory
        again.append(Asked(a.fact, a.conversation, system_text(config, memory)))
    return again


@asynccontextmanager
async def database(backend: str) -> AsyncIterator[str]:
    if backend == "postgres":
        async with pg_database() as url:
            yield url
        return
    with tempfile.TemporaryDirectory() as folder:
        yield f"sqlite+aiosqlite:///{Path(folder) / 'bench.db'}"


def bench_settings(url: str, embedder: str, **overrides: Any) -> Settings:
    return Settings(
        database={"url": url}, agent={"tools": []}, embeddings={"backend": embedder},
        **{"llm": {"provider": "scripted"}, "memory": {"backend": "inprocess"}, **overrides},
    )


@asynccontextmanager
async def world(settings: Settings, prepare: Prepare | None = None) -> AsyncIterator[tuple[Container, SimulatedClock]]:
    """A started container on the scenario's clock; `prepare` overrides its providers first."""
    container, clock = build_container(settings), SimulatedClock()
    container.clock.override(providers.Object(clock))
    if prepare is not None:
        prepare(container)
    await start_backends(container, settings)
    try:
        yield container, clock
    finally:
        await stop_backends(container)


async def scenario(quick: bool, overrides: dict[str, Any], prepare: Prepare | None = None) -> dict[str, Any]:
    """The scenario alone (SQLite, lexical embedder), with settings `overrides`: its recall and prompt tokens."""
    async with database("sqlite") as url:
        settings = bench_settings(url, "lexical", **overrides)
        async with world(settings, prepare) as (container, clock):
            outcomes = await play(container, settings, clock, quick)
            return {"recall": score(outcomes) | {"misses": await diagnose(container, outcomes)},
                    "prompt_tokens": tokens(outcomes)}


async def run(backend: str, embedder: str, quick: bool, vectors: dict[str, list[float]]) -> dict[str, Any]:
    async with database(backend) as url:
        settings = bench_settings(url, embedder)
        async with world(settings) as (container, clock):
            outcomes = await play(container, settings, clock, quick)
            report: dict[str, Any] = {"recall": score(outcomes) | {"misses": await diagnose(container, outcomes)},
                                      "prompt_tokens": tokens(outcomes)}
            seeded = await seed_earlier(container, 100 if quick else 1000, vectors)
            again = await recalled(container, outcomes)
            report["with_earlier"] = seeded | score(again) | {"misses": await diagnose(container, again)}
            last = await container.message_store().get_conversation(outcomes[-1].conversation, OWNER)
            assert isinstance(last, Conversation)
            questions = [f.question for f in FACTS]
            report["timings"] = await time_recall(container, last, questions, 20 if quick else 200)
            assert report["timings"]["items_read"] >= seeded["items"], "the seeded items do not reach recall"
            return report


async def measure(embedder: str, backends: list[str], quick: bool) -> dict[str, Any]:
    vectors: dict[str, list[float]] = {}  # the seeded texts' vectors, embedded once for all backends
    runs = {backend: await run(backend, embedder, quick, vectors) for backend in backends}
    first = runs[backends[0]]

    def scored(report: dict[str, Any]) -> tuple[Any, Any]:
        return report["recall"], {k: v for k, v in report["with_earlier"].items() if k != "seed_seconds"}

    return {
        "recall": first["recall"], "prompt_tokens": first["prompt_tokens"], "with_earlier": first["with_earlier"],
        **{backend: report["timings"] | {"seed_seconds": report["with_earlier"]["seed_seconds"]}
           for backend, report in runs.items()},
        "backends_agree": all(scored(r) == scored(first) for r in runs.values()),
    }


def targets(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    measured = {e: report[e] for e in ("lexical", "local") if e in report}
    goals: dict[str, tuple[Any, bool]] = {}
    for embedder, floor in (("local", 0.95), ("lexical", 0.85)):
        if embedder in measured:
            share = measured[embedder]["recall"]["latest_share"]
            goals[f"latest_share_{embedder}_at_least_{floor}"] = (share, share >= floor)
    stale = max(m["recall"]["stale"] for m in measured.values())
    goals["stale_questions_0"] = (stale, stale == 0)
    saving = min(m["prompt_tokens"]["saving"] for m in measured.values())
    goals["prompt_saving_vs_full_history_at_least_0.9"] = (saving, saving >= 0.9)
    if "sqlite" in measured.get("lexical", {}):
        p50 = measured["lexical"]["sqlite"]["recall_p50_ms"]
        goals["recall_p50_sqlite_lexical_under_10_ms"] = (p50, p50 < 10.0)
    return {name: {"value": value, "met": met} for name, (value, met) in goals.items()}


async def main(quick: bool, embedders: list[str], backends: list[str], llm: bool = False) -> dict[str, Any]:
    began = time.perf_counter()
    report: dict[str, Any] = {
        "mode": "quick" if quick else "full",
        "plan": {"conversations": CONVERSATIONS, "turns": sum(len(c) for c in conversations(quick)),
                 "facts": len(FACTS), "corrected": sum(1 for f in FACTS if f.corrected),
                 "chinese": sum(1 for f in FACTS if f.chinese), "questions": len(FACTS),
                 "paraphrased": sum(1 for f in FACTS if f.paraphrased),
                 "routes": {r: sum(1 for f in FACTS if f.route == r) for r in ("facts", "recall")},
                 "earlier_conversations": 100 if quick else 1000, "backends": backends},
        "setup": "offline scripted model, in-process memory cache, extractive summaries, rule-based entities; "
                 "defaults: cross_conversation_top_k 3, recall_max_tokens 1500, entity_min_confidence 0.7",
    }
    for embedder in embedders:
        report[embedder] = await measure(embedder, backends, quick)
    report["targets"] = targets(report)
    if llm:
        turns = report["plan"]["turns"] + len(FACTS)  # the questions are turns too
        report["llm_upkeep"] = await llm_upkeep(lambda overrides, prepare: scenario(quick, overrides, prepare), turns)
    report["seconds"] = round(time.perf_counter() - began, 2)
    return report


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="2 filler turns a conversation, 100 earlier ones, 20 runs")
    parser.add_argument("--embedders", default="lexical,local")
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument("--llm", action="store_true", help="also upkeep's bill with an LLM, before and after")
    args = parser.parse_args()
    result = asyncio.run(main(args.quick, args.embedders.split(","), args.backends.split(","), args.llm))
    print(json.dumps(result, indent=2, ensure_ascii=False))
