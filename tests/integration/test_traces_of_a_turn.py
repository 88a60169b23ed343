"""The spans of real turns, exported by the OpenTelemetry SDK to its in-memory exporter (a collector
stand-in): the app and its container as `memagent serve` builds them, an OpenAI-protocol model
server, SQLite. The turn continues the caller's `traceparent`; recall, each model call (tokens and
cost as the server reported them), each tool call, the save and each upkeep job are its children;
the turn's log lines carry its trace id and ids."""

from __future__ import annotations

import asyncio
import io
import json
import logging
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from dependency_injector import providers
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from application.ports.tracing import SpanName
from infrastructure.conversations.llm_writers import FOLLOW_UP_INSTRUCTIONS, TITLE_INSTRUCTIONS
from infrastructure.logs.log_format import JsonFormatter
from infrastructure.logs.redaction import Redactor
from infrastructure.memory.llm_memory_models import ARCHIVE_INSTRUCTIONS, EXTRACTION_INSTRUCTIONS, SUMMARY_INSTRUCTIONS
from infrastructure.tracing.opentelemetry_tracer import OpenTelemetryTracer
from interfaces.app import create_app
from interfaces.settings.settings import Settings
from interfaces.wiring.build import build_container
from tests.llm_server import ScriptedLLMServer
from tests.llm_server_scripts import call, error, text, tool_calls

pytestmark = pytest.mark.integration

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
CALLER_SPAN = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE_ID}-{CALLER_SPAN}-01"
USAGE = (7, 2)
PRICE = {"input": 1.0, "output": 4.0}  # USD per million tokens
COST = (USAGE[0] * PRICE["input"] + USAGE[1] * PRICE["output"]) / 1_000_000
UPKEEP_PROMPTS = (SUMMARY_INSTRUCTIONS, ARCHIVE_INSTRUCTIONS, EXTRACTION_INSTRUCTIONS, TITLE_INSTRUCTIONS,
                  FOLLOW_UP_INSTRUCTIONS)


def is_upkeep(body: dict[str, Any]) -> bool:
    first = (body.get("messages") or [{}])[0].get("content")
    return isinstance(first, str) and first.startswith(tuple(p[:40] for p in UPKEEP_PROMPTS))


@dataclass
class Traced:
    http: httpx.AsyncClient
    llm: ScriptedLLMServer
    spans: Callable[[], tuple[ReadableSpan, ...]]
    log: io.StringIO


@pytest.fixture
def llm() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer() as server:
        server.answer_aside(is_upkeep)  # upkeep calls never take a turn's scripted reply
        yield server


@pytest.fixture
def json_log() -> Iterator[io.StringIO]:
    """The root logger's lines, in the JSON format, while the test runs."""
    lines = io.StringIO()
    handler = logging.StreamHandler(lines)
    handler.setFormatter(JsonFormatter(Redactor()))
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield lines
    finally:
        root.removeHandler(handler)


@pytest.fixture
async def traced(
    llm: ScriptedLLMServer, json_log: io.StringIO, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[Traced]:
    for name, value in {
        "MEMAGENT_DATABASE__URL": f"sqlite+aiosqlite:///{tmp_path / 'memagent.db'}",
        "MEMAGENT_LLM__PROVIDER": "openai", "MEMAGENT_LLM__BASE_URL": llm.base_url,
        "MEMAGENT_LLM__API_KEY": "test-key", "MEMAGENT_LLM__MODEL": "scripted-model",
        "MEMAGENT_LLM__MAX_RETRIES": "0", "MEMAGENT_LLM__PRICES": json.dumps({"scripted-model": PRICE}),
        "MEMAGENT_AGENT__SUGGESTED_QUESTIONS_AFTER_ANSWER": "true",
        "MEMAGENT_MEMORY__UPKEEP_EVERY_TURNS": "1",  # each turn's upkeep follows it
        "MEMAGENT_MCP__ENDPOINT": "false",  # its session manager must end in the task it began in: a fixture's may not
    }.items():
        monkeypatch.setenv(name, value)
    settings = Settings()
    exporter = InMemorySpanExporter()
    provider = TracerProvider(shutdown_on_exit=False)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    container = build_container(settings)
    container.tracer.override(providers.Object(OpenTelemetryTracer(provider)))
    app = create_app(settings, container)
    transport = httpx.ASGITransport(app=app)
    async with app.router.lifespan_context(app), httpx.AsyncClient(
        transport=transport, base_url="http://memagent", timeout=30
    ) as http:
        yield Traced(http, llm, exporter.get_finished_spans, json_log)
    provider.shutdown()


async def chat(traced: Traced, query: str, **body: Any) -> dict[str, Any]:
    response = await traced.http.post("/api/chat", json={"query": query, **body},
                                      headers={"traceparent": TRACEPARENT})
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


def hex_trace(span: ReadableSpan) -> str:
    return trace.format_trace_id(span.context.trace_id)


def parent_of(span: ReadableSpan) -> str:
    return trace.format_span_id(span.parent.span_id) if span.parent else ""


def span_id(span: ReadableSpan) -> str:
    return trace.format_span_id(span.context.span_id)


def turn_span(spans: tuple[ReadableSpan, ...], task_id: str) -> ReadableSpan:
    found = [s for s in spans if s.name == SpanName.TURN and s.attributes["memagent.task_id"] == task_id]
    assert len(found) == 1, [s.name for s in spans]
    return found[0]


def children(spans: tuple[ReadableSpan, ...], parent: ReadableSpan) -> list[ReadableSpan]:
    return [s for s in spans if parent_of(s) == span_id(parent)]


async def test_a_turn_continues_the_callers_trace_with_recall_model_tool_and_save_spans(traced: Traced) -> None:
    traced.llm.enqueue(
        tool_calls(call("calculator", {"expression": "2+3"})), text("It is 5.", usage=USAGE),
    )
    answer = await chat(traced, "what is 2+3?")
    spans = traced.spans()
    turn = turn_span(spans, answer["task_id"])

    assert (hex_trace(turn), parent_of(turn)) == (TRACE_ID, CALLER_SPAN)
    assert turn.attributes is not None
    assert {k: turn.attributes[f"memagent.{k}"] for k in ("conversation_id", "message_id", "agent_id", "status")} \
        == {"conversation_id": answer["conversation_id"], "message_id": answer["message_id"], "agent_id": "default",
            "status": "normal"}
    assert turn.attributes["memagent.profile"] == "default"
    own = sorted(s.name for s in children(spans, turn) if not s.name.startswith("memagent.upkeep"))
    assert own == sorted([SpanName.RECALL, SpanName.MODEL_CALL, SpanName.TOOL_CALL, SpanName.MODEL_CALL,
                          SpanName.SAVE])
    tool = next(s for s in children(spans, turn) if s.name == SpanName.TOOL_CALL)
    assert tool.attributes is not None
    assert (tool.attributes["memagent.tool"], tool.attributes["memagent.outcome"]) == ("calculator", "ok")
    calls = sorted((s for s in children(spans, turn) if s.name == SpanName.MODEL_CALL), key=lambda s: s.start_time or 0)
    reported = calls[-1]  # the answer after the tool's result
    assert reported.attributes is not None
    assert {k: reported.attributes[f"memagent.{k}"] for k in ("purpose", "model", "prompt_tokens",
                                                              "completion_tokens")} \
        == {"purpose": "chat", "model": "scripted-model", "prompt_tokens": 7, "completion_tokens": 2}
    assert reported.attributes["memagent.cost_usd"] == pytest.approx(COST)


async def test_each_upkeep_job_is_a_span_of_the_turns_trace(traced: Traced) -> None:
    traced.llm.enqueue(text("Lisbon is lovely.", usage=USAGE))
    answer = await chat(traced, "Plan a weekend in Lisbon, my name is Ada")
    # Entities are extracted in the summary's job (one call); UPKEEP_ENTITIES is the inline extraction's.
    jobs = {SpanName.UPKEEP_TITLE, SpanName.UPKEEP_FOLLOW_UPS, SpanName.UPKEEP_SUMMARY,
            SpanName.UPKEEP_ARCHIVE, SpanName.UPKEEP_RECALL_INDEX}

    spans = traced.spans()
    for _ in range(400):  # the jobs run in this event loop: the wait must yield to them
        if jobs <= {s.name for s in spans}:
            break
        await asyncio.sleep(0.05)
        spans = traced.spans()
    assert jobs <= {s.name for s in spans}, sorted(s.name for s in spans)
    turn = turn_span(spans, answer["task_id"])
    for job in (s for s in spans if s.name in jobs):
        assert parent_of(job) == span_id(turn), job.name
    title = next(s for s in spans if s.name == SpanName.UPKEEP_TITLE)
    title_calls = [s for s in spans if s.name == SpanName.MODEL_CALL and parent_of(s) == span_id(title)]
    assert [s.attributes["memagent.purpose"] for s in title_calls if s.attributes] == ["title"]


async def test_a_failed_turn_fails_its_span_and_its_log_lines_carry_its_trace_and_ids(traced: Traced) -> None:
    traced.llm.enqueue(error(500))
    answer = await chat(traced, "this one fails")
    turn = turn_span(traced.spans(), answer["task_id"])
    assert turn.status.status_code is trace.StatusCode.ERROR
    assert turn.attributes is not None
    assert turn.attributes["memagent.status"] == "error"
    failed_call = next(s for s in traced.spans() if s.name == SpanName.MODEL_CALL and parent_of(s) == span_id(turn))
    assert failed_call.status.status_code is trace.StatusCode.ERROR

    lines = [json.loads(line) for line in traced.log.getvalue().splitlines()]
    about = [line for line in lines if line.get("task_id") == answer["task_id"]]
    assert about, lines
    assert any(line["logger"] == "infrastructure.models.openai_errors" for line in about)
    for line in about:
        assert line["trace_id"] == TRACE_ID
        assert (line["conversation_id"], line["message_id"], line["agent_id"]) == (
            answer["conversation_id"], answer["message_id"], "default")
        assert {"time", "level", "logger", "message"} <= set(line)
