"""AgentScopeChatModel with AgentScope's own OpenAIChatModel pointed at the test server."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Callable, Sequence
from datetime import UTC, datetime

import pytest

from application.errors import ModelError, ModelNotReached
from application.ports.chat_model import ModelChunk
from domain.conversations.messages import Msg, Role, ToolResultBlock, ToolUseBlock, text_msg
from domain.tools.calls import ToolCall, ToolSpec
from infrastructure.models.agentscope_chat_model import AgentScopeChatModel
from infrastructure.models.provider_config import ProviderConfig, TokenPrice
from infrastructure.models.tool_names import wire_name
from tests.llm_server import ScriptedLLMServer
from tests.llm_server_scripts import call, error, stall, text, tool_calls

pytestmark = pytest.mark.integration

AT = datetime(2026, 1, 1, tzinfo=UTC)
CLOCK = ToolSpec("clock.now", "The time in a timezone.", {"type": "object", "properties": {"tz": {"type": "string"}}})
QUESTION = [text_msg("s", Role.SYSTEM, "Be brief.", AT), text_msg("u", Role.USER, "Time in Paris and Tokyo?", AT)]
Factory = Callable[..., AgentScopeChatModel]


@pytest.fixture
async def make(server: ScriptedLLMServer) -> AsyncIterator[Factory]:
    """An AgentScope-backed model on the test server, closed when the test ends."""
    made: list[AgentScopeChatModel] = []

    def build(class_name: str = "OpenAIChatModel", **kwargs: object) -> AgentScopeChatModel:
        config = ProviderConfig(
            "gpt-4o-mini",
            base_url=server.base_url,
            api_key="sk-as-test",
            timeout=5.0,
            max_retries=1,
            retry_initial_delay=0.0,
            price=TokenPrice(0.15, 0.6),
        )
        made.append(AgentScopeChatModel(config, class_name, kwargs))
        return made[-1]

    yield build
    for model in made:
        await model.aclose()


async def collect(
    model: AgentScopeChatModel, tools: Sequence[ToolSpec] = (), messages: Sequence[Msg] = QUESTION
) -> list[ModelChunk]:
    return [chunk async for chunk in model.stream(messages, tools)]


async def test_a_text_reply_streams_its_deltas_then_priced_usage(server: ScriptedLLMServer, make: Factory) -> None:
    server.enqueue(text("It is", " noon.", usage=(1000, 2000)))
    chunks = await collect(make())
    assert [c.text for c in chunks if c.text] == ["It is", " noon."]
    assert chunks[-1].usage is not None
    assert (chunks[-1].usage.prompt_tokens, chunks[-1].usage.completion_tokens) == (1000, 2000)
    assert chunks[-1].usage.price == pytest.approx((1000 * 0.15 + 2000 * 0.6) / 1e6)


async def test_parallel_tool_calls_come_back_with_domain_names(server: ScriptedLLMServer, make: Factory) -> None:
    wire = wire_name(CLOCK.name)
    server.enqueue(
        tool_calls(
            call(wire, {"tz": "Europe/Paris"}, id="c1"),
            call(wire, {"tz": "Asia/Tokyo"}, id="c2"),
            pieces=3,
            interleave=True,
        )
    )
    chunks = await collect(make(), [CLOCK])
    [calls] = [c.tool_calls for c in chunks if c.tool_calls]
    assert calls == (
        ToolCall("c1", "clock.now", {"tz": "Europe/Paris"}),
        ToolCall("c2", "clock.now", {"tz": "Asia/Tokyo"}),
    )
    assert server.chat_requests[0].tools[0]["function"]["name"] == wire


async def test_a_call_that_ended_normally_says_stop_or_tool_calls_on_its_last_chunk(
    server: ScriptedLLMServer, make: Factory
) -> None:
    server.enqueue(text("It is", " noon."), tool_calls(call(wire_name(CLOCK.name), {"tz": "UTC"})))
    model = make()
    answered, called = await collect(model), await collect(model, [CLOCK])
    assert [c.finish_reason for c in answered] == [None] * (len(answered) - 1) + ["stop"]
    assert [c.finish_reason for c in called] == [None] * (len(called) - 1) + ["tool_calls"]


async def test_tool_calls_and_results_reach_the_server_in_openai_form(server: ScriptedLLMServer, make: Factory) -> None:
    history = [
        *QUESTION,
        Msg("a", "assistant", Role.ASSISTANT, (ToolUseBlock("c1", "clock.now", {"tz": "Europe/Paris"}),), AT),
        Msg("t", "tool", Role.TOOL, (ToolResultBlock("c1", "clock.now", "12:00"),), AT),
    ]
    server.enqueue(text("Noon in Paris."))
    await collect(make(), [CLOCK], history)
    sent = server.chat_requests[0].messages
    assert sent[2]["role"] == "assistant"
    assert sent[2]["tool_calls"] == [
        {
            "id": "c1",
            "type": "function",
            "function": {"name": wire_name("clock.now"), "arguments": '{"tz": "Europe/Paris"}'},
        }
    ]
    assert sent[3] == {"role": "tool", "tool_call_id": "c1", "content": "12:00", "name": wire_name("clock.now")}
    assert server.chat_requests[0].stream_options == {"include_usage": True}


async def test_server_errors_are_retried_by_agentscope_then_a_model_error(
    server: ScriptedLLMServer, make: Factory
) -> None:
    server.enqueue(error(500, "down"), error(500, "still down"), text("never"))
    failed_to_answer = r"The model server failed to answer \(HTTP 500\); try again shortly\."
    with pytest.raises(ModelError, match=failed_to_answer) as failed:
        await collect(make())
    assert len(server.chat_requests) == 2  # max_retries=1
    assert isinstance(failed.value, ModelNotReached)  # no model ran: billed nothing


async def test_closing_the_stream_closes_the_connection(server: ScriptedLLMServer, make: Factory) -> None:
    server.enqueue(stall("partial", seconds=30))
    stream = make().stream(QUESTION, [])
    assert (await anext(stream)).text == "partial"
    await stream.aclose()
    [record] = server.chat_requests
    assert await record.wait_done(5)
    assert record.disconnected


async def test_cancelling_the_task_is_not_swallowed_and_closes_the_connection(
    server: ScriptedLLMServer, make: Factory
) -> None:
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


async def test_building_does_no_network_io_and_bad_settings_fail_the_call(
    make: Factory, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("network I/O while constructing")

    with monkeypatch.context() as patched:
        patched.setattr(socket.socket, "connect", refuse)
        model = make("NoSuchChatModel")
    with pytest.raises(ModelError, match="no chat model class 'NoSuchChatModel'"):
        await collect(model)
