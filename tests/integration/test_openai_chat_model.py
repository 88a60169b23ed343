"""OpenAIChatModel against the project's OpenAI-protocol test server, over real HTTP."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest

from application.errors import ModelError, ModelNotReached
from application.ports.chat_model import ModelChunk
from domain.conversations.messages import ImageBlock, Msg, Role, TextBlock, ToolResultBlock, ToolUseBlock
from domain.tools.calls import INVALID_ARGUMENTS_KEY, ToolCall, ToolSpec
from infrastructure.models.openai_chat_model import OpenAIChatModel
from infrastructure.models.provider_config import ProviderConfig, price_for
from infrastructure.models.tool_names import wire_name
from tests.llm_server import ScriptedLLMServer
from tests.llm_server_scripts import (
    DONE,
    SSE_HEADERS,
    ChatContext,
    ErrorScript,
    Reply,
    TextScript,
    call,
    error,
    malformed,
    stall,
    text,
    tool_calls,
)

pytestmark = pytest.mark.integration

API_KEY = "sk-test-0123456789abcdef"
AT = datetime(2026, 1, 1, tzinfo=UTC)
WEATHER = ToolSpec(
    "weather.lookup",  # an MCP-style name the OpenAI wire does not allow as is
    "The weather in a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


PRICES = {"gpt-4o": {"input": 2.5, "output": 10.0}, "gpt-4o-mini": {"input": 0.15, "output": 0.6}}
Factory = Callable[..., OpenAIChatModel]


@pytest.fixture
async def models() -> AsyncIterator[list[OpenAIChatModel]]:
    """The models a test made, closed on its own event loop when it ends."""
    made: list[OpenAIChatModel] = []
    yield made
    for model in made:
        await model.aclose()


@pytest.fixture
def make(server: ScriptedLLMServer, models: list[OpenAIChatModel]) -> Factory:
    """A model on the test server; keyword arguments override its settings."""

    def build(**overrides: object) -> OpenAIChatModel:
        settings: dict[str, object] = {
            "model": "gpt-4o-mini",
            "base_url": server.base_url,
            "api_key": API_KEY,
            "temperature": 0.2,
            "timeout": 5.0,
            "max_retries": 2,
            "retry_initial_delay": 0.01,
            "retry_max_delay": 0.05,
        }
        models.append(OpenAIChatModel(ProviderConfig(**(settings | overrides))))  # type: ignore[arg-type]
        return models[-1]

    return build


@dataclass
class ErrorEventScript:
    """Some text, then an `{"error": …}` event: a server that gives up mid-answer."""

    first: str

    def reply(self, ctx: ChatContext) -> Reply:
        event = b'data: {"error": {"message": "overloaded", "type": "server_error"}}\n\n'
        return Reply(200, SSE_HEADERS, [ctx.chunk({"role": "assistant", "content": self.first}), event, DONE])


def msg(role: Role, *blocks: TextBlock | ImageBlock | ToolUseBlock | ToolResultBlock) -> Msg:
    return Msg(f"{role}-{id(blocks)}", role.value, role, blocks, AT)


QUESTION = [msg(Role.SYSTEM, TextBlock("Be brief.")), msg(Role.USER, TextBlock("Weather in Paris and Rome?"))]


async def collect(
    model: OpenAIChatModel, tools: Sequence[ToolSpec] = (), messages: Sequence[Msg] = QUESTION
) -> list[ModelChunk]:
    return [chunk async for chunk in model.stream(messages, tools)]


async def read_into(model: OpenAIChatModel, seen: list[str]) -> None:
    async for chunk in model.stream(QUESTION, []):
        seen.append(chunk.text)


def texts(chunks: list[ModelChunk]) -> list[str]:
    return [c.text for c in chunks if c.text]


async def test_streamed_text_arrives_as_deltas_in_order(server: ScriptedLLMServer, make: Factory) -> None:
    server.enqueue(text("Sunny", " in", " Paris."))
    chunks = await collect(make())
    assert texts(chunks) == ["Sunny", " in", " Paris."]


@pytest.mark.parametrize("interleave", [False, True])
async def test_parallel_tool_calls_with_split_arguments_are_assembled(
    server: ScriptedLLMServer, make: Factory, interleave: bool
) -> None:
    paris = call(wire_name(WEATHER.name), {"city": "Paris"}, id="call_paris")
    rome = call(wire_name(WEATHER.name), {"city": "Rome"}, id="call_rome")
    server.enqueue(tool_calls(paris, rome, content=["Checking", " both."], pieces=4, interleave=interleave))
    chunks = await collect(make(), [WEATHER])
    assert texts(chunks) == ["Checking", " both."]
    [with_calls] = [c for c in chunks if c.tool_calls]
    assert with_calls.tool_calls == (
        ToolCall("call_paris", "weather.lookup", {"city": "Paris"}),
        ToolCall("call_rome", "weather.lookup", {"city": "Rome"}),
    )
    assert chunks.index(with_calls) > max(i for i, c in enumerate(chunks) if c.text)  # once, at the end


async def test_invalid_tool_arguments_become_a_call_carrying_the_raw_text(
    server: ScriptedLLMServer, make: Factory
) -> None:
    server.enqueue(tool_calls(call(wire_name(WEATHER.name), '{"city": "Par', id="call_bad")))
    chunks = await collect(make(), [WEATHER])
    [calls] = [c.tool_calls for c in chunks if c.tool_calls]
    assert calls == (ToolCall("call_bad", "weather.lookup", {INVALID_ARGUMENTS_KEY: '{"city": "Par'}),)


async def test_usage_gives_tokens_and_the_price_from_the_table(server: ScriptedLLMServer, make: Factory) -> None:
    server.enqueue(text("Hi", usage=(1200, 300)))
    # a dated snapshot is priced as the longest name it starts with
    price = price_for("gpt-4o-mini-2024-07-18", PRICES)
    model = make(model="gpt-4o-mini-2024-07-18", price=price)
    usage = (await collect(model))[-1].usage
    assert usage is not None
    assert (usage.prompt_tokens, usage.completion_tokens) == (1200, 300)
    assert usage.price == pytest.approx((1200 * 0.15 + 300 * 0.6) / 1e6)
    assert server.chat_requests[0].stream_options == {"include_usage": True}


async def test_without_usage_from_the_server_none_is_sent(server: ScriptedLLMServer, make: Factory) -> None:
    server.enqueue(text("Hi", include_usage=False))
    chunks = await collect(make())
    assert texts(chunks) == ["Hi"]
    assert all(c.usage is None for c in chunks)  # the agent loop then counts with its tokenizer


async def test_an_answer_cut_at_the_token_limit_ends_with_finish_reason_length(
    server: ScriptedLLMServer, make: Factory
) -> None:
    server.enqueue(TextScript(["It was", " a dark and"], finish_reason="length"))
    chunks = await collect(make())
    assert texts(chunks) == ["It was", " a dark and"]
    assert [c.finish_reason for c in chunks] == [None, None, "length"]  # once, on the last chunk
    assert chunks[-1].usage is not None  # with the usage that follows the finish reason on the wire


async def test_a_finished_answer_or_tool_round_says_why_it_ended(server: ScriptedLLMServer, make: Factory) -> None:
    server.enqueue(text("Hi", include_usage=False), tool_calls(call(wire_name(WEATHER.name), {"city": "Rome"})))
    answered = await collect(make())
    assert [c.finish_reason for c in answered] == [None, "stop"]  # no usage: the reason comes alone
    calls, usage = (await collect(make(), [WEATHER]))[-2:]
    assert (bool(calls.tool_calls), calls.finish_reason) == (True, None)
    assert (usage.usage is not None, usage.finish_reason) == (True, "tool_calls")  # the call's last chunk


async def test_a_rate_limit_is_retried_then_the_answer_streams(server: ScriptedLLMServer, make: Factory) -> None:
    server.enqueue(error(429, "slow down", retry_after=0.01), error(503), text("ok"))
    chunks = await collect(make(max_retries=2))
    assert texts(chunks) == ["ok"]
    assert [r.status for r in server.chat_requests] == [429, 503, 200]


@pytest.mark.parametrize("status", [429, 500])
async def test_retries_are_bounded_then_a_model_error_says_what_failed(
    server: ScriptedLLMServer, make: Factory, status: int
) -> None:
    server.enqueue(*[error(status, "the scripted failure")] * 4)
    with pytest.raises(ModelError) as failed:
        await collect(make(max_retries=2))
    assert len(server.chat_requests) == 3
    assert isinstance(failed.value, ModelNotReached)  # an error answer ran no model: billed nothing
    assert failed.value.message == {
        429: "The model server is rate limiting requests (HTTP 429); try again shortly.",
        500: "The model server failed to answer (HTTP 500); try again shortly.",
    }[status]


async def test_a_client_error_is_not_retried(server: ScriptedLLMServer, make: Factory) -> None:
    server.enqueue(error(400, "bad request"), text("never"))
    with pytest.raises(ModelError, match=r"^The model server rejected the request \(HTTP 400\)\.$"):
        await collect(make())
    assert len(server.chat_requests) == 1


@pytest.mark.parametrize(
    "limit", [error(429, retry_after=0.4), error(429, retry_after_ms=400)], ids=["retry-after", "retry-after-ms"]
)
async def test_a_rate_limit_waits_as_long_as_the_server_asks_before_the_retry(
    server: ScriptedLLMServer, make: Factory, limit: ErrorScript
) -> None:
    server.enqueue(limit, text("ok"))
    chunks = await collect(make(max_retries=1, retry_initial_delay=0.001, retry_max_delay=5.0))
    assert texts(chunks) == ["ok"]
    limited, answered = server.chat_requests
    assert (limited.status, answered.status) == (429, 200)
    assert answered.received_monotonic - limited.received_monotonic >= 0.4


async def test_a_refused_key_is_the_401_sentence_and_never_shows_the_key(
    server: ScriptedLLMServer, make: Factory
) -> None:
    server.enqueue(error(401, f"Incorrect API key provided: {API_KEY}"), text("never"))
    with pytest.raises(ModelError) as failed:
        await collect(make())
    assert failed.value.message == "The model server refused the API key (HTTP 401)."
    assert isinstance(failed.value, ModelNotReached)
    assert len(server.chat_requests) == 1  # not retried


async def test_an_unreachable_server_is_a_model_error_after_retries(make: Factory) -> None:
    model = make(base_url="http://127.0.0.1:1/v1", max_retries=1)
    with pytest.raises(ModelError, match=r"^The model server could not be reached\.$"):
        await collect(model)


async def test_a_stream_that_breaks_after_the_first_chunk_is_not_retried(
    server: ScriptedLLMServer, make: Factory
) -> None:
    server.enqueue(stall("Half an", seconds=30), text("a second answer"))
    seen: list[str] = []
    with pytest.raises(ModelError, match=r"^The model server did not answer in time\.$") as failed:
        await read_into(make(timeout=0.5), seen)
    assert seen == ["Half an"]
    assert len(server.chat_requests) == 1
    assert not isinstance(failed.value, ModelNotReached)  # the model had started: billed for what it sent


@pytest.mark.parametrize(("kind", "what"), [("not_json", "not JSON"), ("no_choices", "no choices")])
async def test_a_malformed_chunk_is_a_model_error(
    server: ScriptedLLMServer, make: Factory, kind: str, what: str
) -> None:
    server.enqueue(malformed(kind, "fine"), text("not asked for"))  # type: ignore[arg-type]
    with pytest.raises(ModelError, match=what) as failed:
        await collect(make())
    assert len(server.chat_requests) == 1
    assert not isinstance(failed.value, ModelNotReached)  # a server answered, if in garbage


async def test_closing_the_stream_closes_the_connection(server: ScriptedLLMServer, make: Factory) -> None:
    server.enqueue(stall("partial", seconds=30))
    stream = make().stream(QUESTION, [])
    assert (await anext(stream)).text == "partial"
    await stream.aclose()
    [record] = server.chat_requests
    assert await record.wait_done(5)
    assert record.disconnected


async def test_cancelling_the_task_closes_the_connection(server: ScriptedLLMServer, make: Factory) -> None:
    server.enqueue(stall("partial", seconds=30))
    started = asyncio.Event()

    async def consume() -> None:
        async for _ in make().stream(QUESTION, []):
            started.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(started.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    [record] = server.chat_requests
    assert await record.wait_done(5)
    assert record.disconnected


async def test_the_request_is_exactly_what_the_protocol_expects(server: ScriptedLLMServer, make: Factory) -> None:
    history = [
        msg(Role.SYSTEM, TextBlock("Be brief.")),
        msg(Role.USER, TextBlock("What is in this picture, and the weather?"), ImageBlock("https://x.test/a.png")),
        msg(Role.ASSISTANT, TextBlock("Looking."), ToolUseBlock("call_1", "weather.lookup", {"city": "Paris"})),
        msg(Role.TOOL, ToolResultBlock("call_1", "weather.lookup", "sunny")),
    ]
    server.enqueue(text("A cat; sunny."))
    await collect(make(), [WEATHER], history)
    [record] = server.chat_requests
    wire = wire_name("weather.lookup")
    assert record.messages == [
        {"role": "system", "content": "Be brief."},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is in this picture, and the weather?"},
                {"type": "image_url", "image_url": {"url": "https://x.test/a.png"}},
            ],
        },
        {
            "role": "assistant",
            "content": "Looking.",
            "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": wire, "arguments": '{"city": "Paris"}'}},
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
    ]
    assert record.tools == [
        {
            "type": "function",
            "function": {
                "name": wire,
                "description": WEATHER.description,
                "parameters": dict(WEATHER.parameters),
            },
        },
    ]
    assert (record.model, record.stream, record.body["temperature"]) == ("gpt-4o-mini", True, 0.2)
    assert record.stream_options == {"include_usage": True}
    assert record.authorization == f"Bearer {API_KEY}"
    assert record.headers["content-type"] == "application/json"
    assert record.headers["user-agent"].startswith("memagent")
    assert json.dumps(record.body).count(API_KEY) == 0


async def test_a_base_url_with_a_trailing_slash_reaches_the_same_endpoint(
    server: ScriptedLLMServer, make: Factory
) -> None:
    server.enqueue(text("Hi"))
    assert texts(await collect(make(base_url=server.base_url + "/"))) == ["Hi"]
    assert server.chat_requests[0].path.endswith("/v1/chat/completions")


async def test_without_a_key_the_placeholder_is_sent(server: ScriptedLLMServer, make: Factory) -> None:
    server.enqueue(text("Hi"))
    await collect(make(api_key=None))
    assert server.chat_requests[0].authorization == "Bearer no-key"


async def test_an_error_event_mid_stream_is_a_model_error_after_what_came(
    server: ScriptedLLMServer, make: Factory
) -> None:
    server.enqueue(ErrorEventScript("Half an"), text("never"))
    seen: list[str] = []
    with pytest.raises(ModelError, match=r"^The call to the model server failed unexpectedly\.$") as failed:
        await read_into(make(), seen)
    assert seen == ["Half an"]
    assert len(server.chat_requests) == 1
    assert not isinstance(failed.value, ModelNotReached)


async def test_a_turn_without_tools_sends_no_tools_key(server: ScriptedLLMServer, make: Factory) -> None:
    server.enqueue(text("Hi"))
    await collect(make())
    assert "tools" not in server.chat_requests[0].body


async def test_a_server_that_stops_reading_the_request_is_a_timeout(make: Factory) -> None:
    accepted: list[asyncio.StreamWriter] = []

    async def never_read(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(writer)  # kept open, never read: the client's upload stalls

    listener = await asyncio.start_server(never_read, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    huge = [msg(Role.USER, TextBlock("x" * 30_000_000))]  # far more than the socket buffers hold
    try:
        model = make(base_url=f"http://127.0.0.1:{port}/v1", timeout=0.5, max_retries=0)
        with pytest.raises(ModelError, match=r"^The model server did not answer in time\.$"):
            await asyncio.wait_for(collect(model, messages=huge), 30)
    finally:
        for writer in accepted:
            writer.close()
        listener.close()
        await listener.wait_closed()
