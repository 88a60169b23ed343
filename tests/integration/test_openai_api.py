"""The OpenAI-compatible API over real HTTP, with the real `openai` SDK (sync and async, streamed and
not) and AgentScope's `OpenAIChatModel` as clients of a running `memagent serve` (SQLite, keys
required): agents as models, a completion as a memagent turn (its id, headers, stored message),
streamed chunks with the `memagent` step extension, a pinned version, the request's sampling
settings and system message, and the end user. Errors: test_openai_api_errors.py; stopping,
conflicts and clients that go: test_openai_api_control.py; conversations: test_openai_api_conversations.py.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from tests.integration.openai_world import (
    World,
    agent_key,
    last_turn_body,
    new_agent,
    new_version,
    remote_agent,
    stored_message,
    system_prompt,
    turn_of,
    world_of,
)
from tests.integration.streaming_helpers import scripted_answer
from tests.llm_server import ScriptedLLMServer
from tests.llm_server_scripts import TextScript, call, text, tool_calls

pytestmark = pytest.mark.integration

HI = [{"role": "user", "content": "Hello there."}]


@pytest.fixture(scope="module")
def world(shared_server: ScriptedLLMServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with world_of("sqlite-inprocess", tmp_path_factory.mktemp("openai-api"), shared_server) as running:
        yield running


@pytest.fixture
def http(world: World, server: ScriptedLLMServer) -> Iterator[httpx.Client]:
    """Alice's client of memagent's own API; the test LLM server emptied (`server`)."""
    with world.http() as client:
        yield client


def ids(models: Any) -> list[str]:
    return [model.id for model in models]


def test_models_are_the_default_agent_and_published_agents_by_unique_name_namesakes_by_id(
    world: World, http: httpx.Client
) -> None:
    ada = new_agent(http, "Ada")
    twins = {new_agent(http, "Twin"), new_agent(http, "Twin")}
    odd = new_agent(http, "team@home/fr")  # `@` and `/` in a name
    new_agent(http, "Draft", publish=False)  # cannot answer yet: not a model
    with world.http(world.bob) as bob_http:
        new_agent(bob_http, "Bobs")
    listed = world.sdk().models.list()
    assert listed.object == "list"
    assert ids(listed)[0] == "memagent"
    assert set(ids(listed)) == {"memagent", "Ada", *twins, "team@home/fr"}
    for model in listed:
        got = world.sdk().models.retrieve(model.id)
        assert (got.id, got.object, got.owned_by) == (model.id, "model", "memagent")
        assert isinstance(got.created, int)
    assert world.sdk().models.retrieve(ada).id == ada  # an agent's id is a model id too
    for unknown in ("Bobs", "Draft", "Twin", "nobody"):
        with pytest.raises(openai.NotFoundError) as refused:
            world.sdk().models.retrieve(unknown)
        assert refused.value.code == "model_not_found"
    assert ids(world.sdk(world.bob).models.list()) == ["memagent", "Bobs"]
    for model in ("team@home/fr", "team@home/fr@1"):
        raw = world.sdk().chat.completions.with_raw_response.create(model=model, messages=HI)
        conversation, message_id = turn_of(raw.headers)
        assert stored_message(http, conversation, message_id)["agent_id"] == odd


def test_an_agent_key_sees_and_chats_with_its_own_agent_only(world: World, http: httpx.Client) -> None:
    mine = new_agent(http, "Kiosk")
    key = agent_key(http, mine)
    assert ids(world.sdk(key).models.list()) == ["Kiosk"]
    answer = world.sdk(key).chat.completions.create(model="Kiosk", messages=HI, user="visitor-1")
    assert answer.choices[0].message.content == scripted_answer("Hello there.")
    with pytest.raises(openai.NotFoundError) as refused:
        world.sdk(key).chat.completions.create(model="memagent", messages=HI, user="visitor-1")
    assert refused.value.code == "model_not_found"
    with pytest.raises(openai.PermissionDeniedError):  # an agent key acts for one end user: `user`
        world.sdk(key).chat.completions.create(model="Kiosk", messages=HI)


def test_a_completion_is_a_turn_whose_id_is_the_message_id_named_in_the_headers(
    world: World, http: httpx.Client
) -> None:
    raw = world.sdk().chat.completions.with_raw_response.create(model="memagent", messages=HI)
    conversation, message_id = turn_of(raw.headers)
    assert raw.headers["x-memagent-task-id"]
    completion = raw.parse()
    assert (completion.id, completion.object, completion.model) == (message_id, "chat.completion", "memagent")
    [choice] = completion.choices
    assert (choice.index, choice.finish_reason, choice.message.role) == (0, "stop", "assistant")
    assert choice.message.content == scripted_answer("Hello there.")
    stored = stored_message(http, conversation, message_id)
    assert (stored["status"], stored["answer"], stored["entry_point"]) == ("normal", choice.message.content, "openai")
    assert stored["task_id"] == raw.headers["x-memagent-task-id"]
    assert completion.usage is not None
    assert completion.usage.total_tokens == stored["total_token_count"] > 0
    assert completion.usage.prompt_tokens + completion.usage.completion_tokens == completion.usage.total_tokens


async def test_a_streamed_completion_ends_with_its_finish_reason_then_the_usage_chunk(world: World) -> None:
    client = world.async_sdk()
    try:
        raw = await client.chat.completions.with_raw_response.create(
            model="memagent", messages=HI, stream=True, stream_options={"include_usage": True})
        chunks = [chunk async for chunk in raw.parse()]
    finally:
        await client.close()
    message_id = raw.headers["x-memagent-message-id"]
    assert raw.headers["content-type"].startswith("text/event-stream")
    assert {c.id for c in chunks} == {message_id}
    assert {c.object for c in chunks} == {"chat.completion.chunk"}
    assert chunks[0].choices[0].delta.role == "assistant"
    *answer, finish, usage = chunks
    assert "".join(c.choices[0].delta.content or "" for c in answer) == scripted_answer("Hello there.")
    assert [c.choices[0].finish_reason for c in answer] == [None] * len(answer)
    assert finish.choices[0].finish_reason == "stop"
    assert usage.choices == []
    assert usage.usage is not None
    assert usage.usage.total_tokens > 0


def test_the_stream_ends_with_done_and_has_no_usage_chunk_unless_asked(world: World) -> None:
    body = {"model": "memagent", "messages": HI, "stream": True}
    with httpx.Client(base_url=world.v1, timeout=30, headers={"Authorization": f"Bearer {world.alice}"}) as client:
        wire = client.post("/chat/completions", json=body)
    assert wire.status_code == 200, wire.text
    frames = [f for f in wire.text.split("\n\n") if f and not f.startswith(":")]
    assert frames[-1] == "data: [DONE]"
    assert all(f.startswith("data: {") for f in frames[:-1])
    assert '"usage"' not in wire.text
    assert '"finish_reason": "stop"' in frames[-2]


def test_step_chunks_carry_the_memagent_extension_of_the_tool_call_and_its_result(
    world: World, http: httpx.Client, server: ScriptedLLMServer
) -> None:
    remote_agent(http, "Calc", tools=["calculator"])
    server.enqueue(tool_calls(call("calculator", {"expression": "6*7"})), text("It is ", "42."))
    stream = world.sdk().chat.completions.create(model="Calc", messages=[{"role": "user", "content": "6 x 7?"}],
                                                 stream=True)
    chunks = list(stream)
    steps = [c.model_extra["memagent"] for c in chunks if (c.model_extra or {}).get("memagent")]
    assert all(c.choices[0].delta.content is None for c in chunks if (c.model_extra or {}).get("memagent"))
    assert [s["event"] for s in steps] == ["long_term_memory_recall", "agent_thought", "agent_action"]
    action = steps[-1]
    assert (action["tool"], action["tool_input"]) == ("calculator", {"expression": "6*7"})
    assert "42" in action["observation"]
    assert set(action) == {"event", "tool", "tool_input", "observation"}
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == "It is 42."
    assert chunks[-1].choices[0].finish_reason == "stop"
    # The tool's result went back to the model (as a message: the profile declares no native tool calls).
    assert '"result": "42"' in str(last_turn_body(server)["messages"][-1]["content"])


def test_a_pinned_version_runs_after_a_newer_one_is_published(world: World, http: httpx.Client) -> None:
    agent = new_agent(http, "Pinny", {"preset_prompt": "You are Pinny, version one.", "tools": []})
    assert new_version(http, agent, preset_prompt="You are Pinny, version two.", tools=[]) == 2
    for model, version in (("Pinny@1", 1), ("Pinny", 2), (f"{agent}@1", 1)):
        raw = world.sdk().chat.completions.with_raw_response.create(model=model, messages=HI)
        conversation, message_id = turn_of(raw.headers)
        assert f"version {'one' if version == 1 else 'two'}" in system_prompt(http, message_id)
        assert stored_message(http, conversation, message_id)["agent_version"] == version
    for missing in ("Pinny@3", "Pinny@0", "Pinny@x"):
        with pytest.raises(openai.NotFoundError) as refused:
            world.sdk().chat.completions.create(model=missing, messages=HI)
        assert refused.value.code == "model_not_found"


def test_temperature_top_p_and_max_tokens_reach_the_model_over_the_agents_own(
    world: World, http: httpx.Client, server: ScriptedLLMServer
) -> None:
    remote_agent(http, "Tuned", model_params={"temperature": 0.7, "max_tokens": 500})
    sampling = ("temperature", "top_p", "max_tokens", "max_completion_tokens")
    sent: list[dict[str, Any]] = []
    for options in ({"temperature": 0.1, "top_p": 0.5, "max_tokens": 64}, {"max_completion_tokens": 32}, {}):
        server.enqueue(text("Tuned."))
        world.sdk().chat.completions.create(model="Tuned", messages=HI, **options)
        sent.append({k: v for k, v in last_turn_body(server).items() if k in sampling})
    assert sent == [{"temperature": 0.1, "top_p": 0.5, "max_tokens": 64},
                    {"temperature": 0.7, "max_tokens": 32},
                    {"temperature": 0.7, "max_tokens": 500}]


def test_a_length_cut_answer_ends_with_finish_reason_length_streamed_or_not(
    world: World, http: httpx.Client, server: ScriptedLLMServer
) -> None:
    remote_agent(http, "Short")
    server.enqueue(TextScript(["Cut sh"], finish_reason="length"), TextScript(["Cut sh"], finish_reason="length"))
    whole = world.sdk().chat.completions.create(model="Short", messages=HI, max_tokens=2)
    streamed = list(world.sdk().chat.completions.create(model="Short", messages=HI, max_tokens=2, stream=True))
    assert (whole.choices[0].message.content, whole.choices[0].finish_reason) == ("Cut sh", "length")
    assert streamed[-1].choices[0].finish_reason == "length"


def test_the_requests_system_messages_are_appended_to_the_agents_preset_prompt(
    world: World, http: httpx.Client
) -> None:
    new_agent(http, "Guide", {"preset_prompt": "You are Guide, a travel agent.", "tools": []})
    messages = [{"role": "system", "content": "Answer in French."}, {"role": "developer", "content": "Be brief."},
                *HI]
    raw = world.sdk().chat.completions.with_raw_response.create(model="Guide", messages=messages)
    system = system_prompt(http, raw.headers["x-memagent-message-id"])
    assert "You are Guide, a travel agent.\n\nAnswer in French.\n\nBe brief." in system
    plain = world.sdk().chat.completions.with_raw_response.create(model="Guide", messages=HI)
    assert "French" not in system_prompt(http, plain.headers["x-memagent-message-id"])


def test_user_is_the_end_user_whose_conversation_it_is(world: World, http: httpx.Client) -> None:
    raw = world.sdk().chat.completions.with_raw_response.create(model="memagent", messages=HI, user="ann-42")
    conversation, message_id = turn_of(raw.headers)
    theirs = http.get("/api/conversations", params={"user": "ann-42"}).json()["data"]
    assert [c["id"] for c in theirs] == [conversation]
    assert conversation not in http.get("/api/conversations", params={"user": "ben-42"}).text
    assert stored_message(http, conversation, message_id)["user"] == "ann-42"


def test_agentscope_s_openai_chat_model_uses_memagent_as_its_model_streamed_or_not(world: World) -> None:
    from agentscope import message as am
    from agentscope.credential import OpenAICredential
    from agentscope.model import OpenAIChatModel

    async def ask(stream: bool) -> Any:
        model = OpenAIChatModel(credential=OpenAICredential(api_key=world.alice, base_url=world.v1),
                                model="memagent", stream=stream, max_retries=0)
        try:
            reply = await model([am.SystemMsg(name="system", content="Be exact."),
                                 am.UserMsg(name="user", content='[[tool:calculator {"expression": "2*21"}]]')])
            if not stream:
                return reply
            return [response async for response in reply][-1]
        finally:
            await model.client.close()

    for stream in (True, False):
        reply = asyncio.run(ask(stream))
        said = "".join(block.text for block in reply.content if isinstance(block, am.TextBlock))
        assert "calculator returned" in said
        assert '"result": "42"' in said
        assert reply.usage is not None
        assert reply.usage.input_tokens > 0
