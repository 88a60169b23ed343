"""Proves the scripted OpenAI-protocol test server against the real ``openai`` SDK over HTTP.

If these pass, tests of memagent's chat backend can trust that what they see from the server
is what the SDK would see from api.openai.com in the same situation.
"""

from __future__ import annotations

import json
import math
import time

import httpx
import openai
import pytest
from openai import AsyncOpenAI

from tests.llm_server import ScriptedLLMServer, embedding_vector
from tests.llm_server_scripts import call, error, malformed, stall, text, tool_calls

pytestmark = pytest.mark.integration  # real HTTP on 127.0.0.1 (server started in-process)

USER = [{"role": "user", "content": "What's the weather in Paris and Rome?"}]


@pytest.fixture(scope="module")
def shared_server():
    """One server for the module: it runs in its own thread, so every test's loop can use it."""
    with ScriptedLLMServer(embedding_dim=16) as server:
        yield server


@pytest.fixture
def server(shared_server: ScriptedLLMServer) -> ScriptedLLMServer:
    shared_server.reset()
    return shared_server


def client(server: ScriptedLLMServer, **kwargs) -> AsyncOpenAI:
    kwargs.setdefault("max_retries", 0)
    return AsyncOpenAI(base_url=server.base_url, api_key="test-key", **kwargs)


async def collect(server: ScriptedLLMServer, **kwargs) -> list:
    async with client(server) as c:
        stream = await c.chat.completions.create(model="gpt-test", messages=USER, stream=True, **kwargs)
        return [chunk async for chunk in stream]


async def read_contents_into(stream, seen: list) -> None:
    async for chunk in stream:
        seen.append(chunk.choices[0].delta.content)


@pytest.mark.asyncio
async def test_streamed_text_arrives_in_scripted_chunks(server):
    server.enqueue(text("Hel", "lo", " world"))
    chunks = await collect(server)
    contents = [c.choices[0].delta.content for c in chunks if c.choices[0].delta.content]
    assert contents == ["Hel", "lo", " world"]
    assert chunks[0].choices[0].delta.role == "assistant"
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert all(c.usage is None for c in chunks)  # not asked for
    assert len({c.id for c in chunks}) == 1


@pytest.mark.asyncio
async def test_usage_chunk_sent_when_requested_or_forced(server):
    server.enqueue(text("a", "b", usage=(12, 2)), text("c", include_usage=True))
    chunks = await collect(server, stream_options={"include_usage": True})
    assert chunks[-1].choices == []
    assert (chunks[-1].usage.prompt_tokens, chunks[-1].usage.completion_tokens) == (12, 2)
    forced = await collect(server)
    assert forced[-1].usage is not None
    assert forced[-1].usage.completion_tokens == 1


@pytest.mark.asyncio
@pytest.mark.parametrize("interleave", [False, True])
async def test_parallel_tool_calls_with_split_arguments_reassemble(server, interleave):
    paris = call("get_weather", {"city": "Paris", "unit": "celsius"}, id="call_paris")
    rome = call("get_weather", {"city": "Rome", "unit": "celsius"}, id="call_rome")
    server.enqueue(tool_calls(paris, rome, content=["Checking", " both."], pieces=4, interleave=interleave))
    chunks = await collect(server)
    content, calls, arg_deltas = "", {}, 0
    for chunk in chunks:
        delta = chunk.choices[0].delta
        content += delta.content or ""
        for tc in delta.tool_calls or []:
            slot = calls.setdefault(tc.index, {"id": None, "name": None, "arguments": ""})
            if tc.id:
                slot["id"], slot["name"] = tc.id, tc.function.name
            else:
                arg_deltas += 1
            slot["arguments"] += tc.function.arguments or ""
    assert content == "Checking both."
    assert arg_deltas == 8  # four fragments per call: arguments really were split
    assert [calls[i]["id"] for i in sorted(calls)] == ["call_paris", "call_rome"]
    assert json.loads(calls[1]["arguments"]) == {"city": "Rome", "unit": "celsius"}
    assert json.loads(calls[0]["arguments"]) == {"city": "Paris", "unit": "celsius"}
    assert chunks[-1].choices[0].finish_reason == "tool_calls"


@pytest.mark.asyncio
async def test_same_scripts_answer_non_stream_requests(server):
    server.enqueue(text("Hello", " there"), tool_calls(call("f", '{"x": 1}', id="call_1")))
    async with client(server) as c:
        first = await c.chat.completions.create(model="m", messages=USER)
        second = await c.chat.completions.create(model="m", messages=USER)
    assert first.choices[0].message.content == "Hello there"
    assert first.usage.completion_tokens == 2
    [tc] = second.choices[0].message.tool_calls
    assert (tc.id, tc.function.name, tc.function.arguments) == ("call_1", "f", '{"x": 1}')
    assert second.choices[0].finish_reason == "tool_calls"


@pytest.mark.asyncio
async def test_429_then_success_uses_sdk_retry(server):
    server.enqueue(error(429, "slow down", retry_after=0.01), text("ok"))
    async with client(server, max_retries=1) as c:
        stream = await c.chat.completions.create(model="m", messages=USER, stream=True)
        contents = [ch.choices[0].delta.content async for ch in stream]
    assert "ok" in contents
    assert [r.status for r in server.chat_requests] == [429, 200]


@pytest.mark.asyncio
@pytest.mark.parametrize("status", [500, 503])
async def test_server_error_raises_without_retries(server, status):
    server.enqueue(error(status, "boom"))
    async with client(server) as c:
        with pytest.raises(openai.InternalServerError) as info:
            await c.chat.completions.create(model="m", messages=USER, stream=True)
    assert info.value.status_code == status
    assert info.value.body["message"] == "boom"
    assert len(server.chat_requests) == 1


@pytest.mark.asyncio
async def test_client_closing_a_stalled_stream_is_recorded_as_disconnect(server):
    server.enqueue(stall("partial", " answer", seconds=30))
    async with client(server) as c:
        stream = await c.chat.completions.create(model="m", messages=USER, stream=True)
        seen = [await stream.__anext__() for _ in range(3)]  # role chunk + 2 content chunks
        await stream.close()
    assert [s.choices[0].delta.content for s in seen[1:]] == ["partial", " answer"]
    [record] = server.chat_requests
    assert await record.wait_done(5)
    assert record.disconnected


@pytest.mark.asyncio
async def test_client_timeout_on_stall_is_recorded_as_disconnect(server):
    server.enqueue(stall(seconds=30))
    async with client(server, timeout=0.3) as c:
        with pytest.raises(openai.APITimeoutError):
            await c.chat.completions.create(model="m", messages=USER)
    [record] = server.chat_requests
    assert await record.wait_done(5)
    assert record.disconnected


@pytest.mark.asyncio
async def test_non_json_chunk_makes_the_sdk_raise_json_decode_error(server):
    # Documented behaviour: the SDK lets json.JSONDecodeError escape (not an openai.APIError),
    # after yielding the valid chunks that came before the bad line.
    server.enqueue(malformed("not_json", "fine"))
    seen: list = []
    async with client(server) as c:
        stream = await c.chat.completions.create(model="m", messages=USER, stream=True)
        with pytest.raises(json.JSONDecodeError):
            await read_contents_into(stream, seen)
    assert seen == ["", "fine"]


@pytest.mark.asyncio
async def test_chunk_without_choices_is_yielded_with_choices_none(server):
    # Documented behaviour: the SDK does not validate chunks; the broken one arrives with
    # ``choices=None``, so naive ``chunk.choices[0]`` code fails with TypeError.
    server.enqueue(malformed("no_choices", "fine"))
    chunks = await collect(server)
    assert [c.choices is None for c in chunks] == [False, False, True, False]


@pytest.mark.asyncio
async def test_request_is_recorded_exactly(server):
    tools = [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
            },
        }
    ]
    server.enqueue(text("x"))
    await collect(server, tools=tools, temperature=0.25, stream_options={"include_usage": True})
    [record] = server.requests
    assert (record.method, record.path, record.script) == (
        "POST",
        "/v1/chat/completions",
        "TextScript",
    )
    assert record.messages == USER
    assert record.tools == tools
    assert record.stream
    assert record.stream_options == {"include_usage": True}
    assert record.model == "gpt-test"
    assert record.body["temperature"] == 0.25
    assert record.authorization == "Bearer test-key"
    assert await record.wait_done(5)
    assert not record.disconnected


@pytest.mark.asyncio
async def test_empty_queue_echoes_last_user_message(server):
    chunks = await collect(server)
    echoed = "".join(c.choices[0].delta.content or "" for c in chunks)
    assert echoed == USER[0]["content"]


@pytest.mark.asyncio
async def test_embeddings_are_deterministic_unit_vectors(server):
    async with client(server) as c:
        first = await c.embeddings.create(model="emb", input=["alpha", "beta"])
        again = await c.embeddings.create(model="emb", input="alpha", encoding_format="float")
        small = await c.embeddings.create(model="emb", input="alpha", dimensions=4)
    alpha, beta = (d.embedding for d in first.data)
    assert len(alpha) == 16
    assert alpha != beta
    assert again.data[0].embedding == pytest.approx(alpha, abs=1e-6)  # base64 vs float
    assert again.data[0].embedding == embedding_vector("alpha", 16)
    assert math.isclose(sum(v * v for v in alpha), 1.0, rel_tol=1e-5)
    assert len(small.data[0].embedding) == 4


@pytest.mark.asyncio
async def test_models_lists_configured_models(server):
    async with client(server) as c:
        models = [m.id async for m in c.models.list()]
    assert models == ["scripted-model"]
    assert server.requests[-1].path == "/v1/models"


def test_stop_does_not_wait_for_a_stalled_stream():
    """Fixture teardown must not hang on a test that left a stall open."""
    server = ScriptedLLMServer().start()
    server.enqueue(stall("a", seconds=60))
    body = {"model": "m", "messages": USER, "stream": True}
    with (
        httpx.Client() as http,
        http.stream("POST", f"{server.base_url}/chat/completions", json=body) as response,
    ):
        assert next(response.iter_bytes()).startswith(b"data: ")
        started = time.monotonic()
        server.stop()
        assert time.monotonic() - started < 3
    [record] = server.requests
    assert record.done.is_set()  # ended, by the stop or by the socket it closed (which one wins is timing)
