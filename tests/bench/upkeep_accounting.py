"""Memory upkeep's model bill, at the OpenAI-protocol test server (tests/llm_server.py), for the memory
benchmarks' `--llm` runs.

`OfflineMemoryModel` answers each request as a model would, from memagent's offline memory models, so
recall can be scored: a digest (`update_memory`) with the extractive summary and the rule-based
entities of the exchanges it was sent, a summary or an archive entry as text, a `record_entities` call,
and the chat itself as the echo. `bill` counts the requests the server got and their prompt tokens
(the tokenizer's count of every message's text) by purpose, told apart by the system prompt.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any

from dependency_injector import providers

from application.ports.memory_models import DigestRequest
from domain.ids import MessageId
from domain.memory.summary import SummaryLimit
from domain.memory.window import Exchange
from infrastructure.conversations.llm_writers import TITLE_INSTRUCTIONS
from infrastructure.memory.composed_digester import ComposedDigester
from infrastructure.memory.extractive_summarizer import ExtractiveSummarizer
from infrastructure.memory.llm_memory_digester import DIGEST_INSTRUCTIONS, DIGEST_TOOL
from infrastructure.memory.llm_memory_models import (
    ARCHIVE_INSTRUCTIONS,
    EXTRACTION_INSTRUCTIONS,
    EXTRACTION_TOOL,
    SUMMARY_INSTRUCTIONS,
)
from infrastructure.memory.rule_entity_extractor import RuleBasedEntityExtractor
from interfaces.wiring.container import Container
from tests.llm_server import RecordedRequest
from tests.llm_server_scripts import ChatContext, Reply, call, echo_script, text, tool_calls

PURPOSES = {"digest": DIGEST_INSTRUCTIONS, "summary": SUMMARY_INSTRUCTIONS, "archive": ARCHIVE_INSTRUCTIONS,
            "entities": EXTRACTION_INSTRUCTIONS, "title": TITLE_INSTRUCTIONS}
UPKEEP = ("digest", "summary", "archive", "entities")
_EXCHANGE = re.compile(r"^\[(\d+)\] User: (.*)\n\[\1\] Assistant: (.*)$", re.MULTILINE)
_PLAIN = re.compile(r"^User: (.*)\nAssistant: (.*)$", re.MULTILINE)
LIMIT = SummaryLimit()  # the default bounds, as the benchmarks' settings have them


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""


def purpose_of(body: dict[str, Any]) -> str:
    system = _text((body.get("messages") or [{}])[0].get("content"))
    return next((name for name, prompt in PURPOSES.items() if system.startswith(prompt[:40])), "chat")


def split_digest(container: Container) -> None:
    """The upkeep's summary and entities as two calls (before issue 21), not one digest; before start."""
    memory = container.memory
    memory.digester.override(providers.Object(
        lambda profile: ComposedDigester(memory.summarizer()(profile), memory.entity_extractor()(profile))))


def _now(work: Coroutine[Any, Any, Any]) -> Any:
    """A coroutine's value, on a loop of its own (a script answers synchronously, on the server's loop)."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, work).result()


def _exchanges(ask: str, pattern: re.Pattern[str]) -> tuple[Exchange, ...]:
    at = datetime.now(UTC)
    found = [m.groups()[-2:] for m in pattern.finditer(ask)]
    return tuple(Exchange(MessageId(f"m{n}"), query, answer, at) for n, (query, answer) in enumerate(found))


class OfflineMemoryModel:
    """A `Script` for every request of a run (enqueue it once per request expected)."""

    def __init__(self) -> None:
        self._summarizer, self._extractor = ExtractiveSummarizer(), RuleBasedEntityExtractor()

    def reply(self, ctx: ChatContext) -> Reply:
        messages = ctx.body.get("messages") or []
        ask = _text(messages[-1].get("content")) if messages else ""
        answer: Callable[[str], Reply] = {
            "digest": lambda a: self._digest(a, ctx), "summary": lambda a: self._summary(a, ctx),
            "archive": lambda a: text(_now(self._summarizer.condense(_exchanges(a, _PLAIN), LIMIT))).reply(ctx),
            "entities": lambda a: self._entities(a, ctx),
        }.get(purpose_of(ctx.body), lambda _: echo_script(ctx.body).reply(ctx))
        return answer(ask)

    def _digest(self, ask: str, ctx: ChatContext) -> Reply:
        exchanges = _exchanges(ask, _EXCHANGE)
        summary = ask.split("Current summary:\n", 1)[1].split("\n\n", 1)[0].replace("(none yet)", "")
        wants_summary = '"summary"' in json.dumps(ctx.body.get("tools"))
        request = DigestRequest(summary, (), exchanges, LIMIT if wants_summary else None, True)
        digest = _now(ComposedDigester(self._summarizer, self._extractor).digest(request))
        entities = [{**e, "turn": n} for n, found in enumerate(digest.extractions, start=1) for e in found["entities"]]
        intent = digest.extractions[-1]["intent"] if digest.extractions else ""
        arguments = {"intent": intent, "entities": entities}
        if wants_summary:
            arguments["summary"] = digest.summary
        return tool_calls(call(DIGEST_TOOL, arguments)).reply(ctx)

    def _summary(self, ask: str, ctx: ChatContext) -> Reply:
        summary = ask.split("Current summary:\n", 1)[1].split("\n\nNew exchanges:", 1)[0].replace("(none yet)", "")
        return text(_now(self._summarizer.update(summary, _exchanges(ask, _PLAIN), LIMIT))).reply(ctx)

    def _entities(self, ask: str, ctx: ChatContext) -> Reply:
        query = ask.split("The user's message:\n", 1)[1].split("\n\nThe assistant's reply", 1)[0]
        found = _now(self._extractor.extract(Exchange(MessageId("m"), query, "", datetime.now(UTC))))
        return tool_calls(call(EXTRACTION_TOOL, found)).reply(ctx)


def bill(requests: list[RecordedRequest], count: Callable[[str], int], turns: int) -> dict[str, Any]:
    """Calls and prompt tokens by purpose; upkeep calls per turn and upkeep tokens against the chat's
    (the titles' calls count as neither)."""
    calls: dict[str, int] = {}
    tokens: dict[str, int] = {}
    for request in requests:
        body = request.body if isinstance(request.body, dict) else {}
        purpose = purpose_of(body)
        calls[purpose] = calls.get(purpose, 0) + 1
        tokens[purpose] = tokens.get(purpose, 0) + sum(count(_text(m.get("content"))) for m in body["messages"])
    upkeep_calls = sum(n for p, n in calls.items() if p in UPKEEP)
    upkeep_tokens = sum(n for p, n in tokens.items() if p in UPKEEP)
    return {
        "calls": dict(sorted(calls.items())), "prompt_tokens": dict(sorted(tokens.items())),
        "upkeep_calls_per_turn": round(upkeep_calls / turns, 3),
        "upkeep_tokens_over_chat_tokens": round(upkeep_tokens / max(1, tokens.get("chat", 0)), 3),
    }
