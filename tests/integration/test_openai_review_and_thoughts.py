"""What an OpenAI client is sent of a turn's text, over real HTTP with the `openai` SDK: the reasoning
before a server tool call never reaches its answer (it cannot be taken back), an output keyword
never leaves the server on either API, streamed or not, and the preset response ends an answer the
output review replaced, with `finish_reason: "content_filter"`."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.integration.openai_world import World, remote_agent, remote_profile, world_of
from tests.llm_server import ScriptedLLMServer
from tests.llm_server_scripts import call, text, tool_calls

pytestmark = pytest.mark.integration

PRESET = "That is not something I can share."
ASK = [{"role": "user", "content": "What is the plan?"}]
LEAK = "Our plan: the launch code is 0000."


@pytest.fixture(scope="module")
def world(shared_server: ScriptedLLMServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    calling = remote_profile(shared_server) | {"capabilities": {"tool_call": True}}
    profiles = {"MEMAGENT_MODELS": json.dumps([calling])}
    with world_of("sqlite-inprocess", tmp_path_factory.mktemp("review"), shared_server, profiles) as running:
        with running.http() as http:
            review = {"output_keywords": ["launch code"], "input_keywords": [], "response": PRESET}
            remote_agent(http, "Guarded", tools=["calculator"], review=review)
        yield running


def streamed_content(world: World, messages: list[dict[str, str]]) -> tuple[list[str], str | None]:
    chunks = list(world.sdk().chat.completions.create(model="Guarded", messages=messages, stream=True))
    deltas = [c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content]
    return deltas, [c.choices[0].finish_reason for c in chunks if c.choices][-1]


def test_reasoning_before_a_server_tool_call_never_reaches_an_openai_clients_answer(
    world: World, server: ScriptedLLMServer
) -> None:
    server.enqueue(tool_calls(call("calculator", {"expression": "2+2"}), content=("Let me compute that.",)),
                   text("It is ", "4."))
    deltas, finish = streamed_content(world, [{"role": "user", "content": "2+2?"}])
    assert ("".join(deltas), finish) == ("It is 4.", "stop")


def test_a_long_text_before_a_tool_call_is_taken_for_the_answer_and_the_next_step_follows_a_blank_line(
    world: World, server: ScriptedLLMServer
) -> None:
    long = "I will work this out step by step, carefully checking each part of the sum before I answer you. " * 2
    server.enqueue(tool_calls(call("calculator", {"expression": "2+2"}), content=(long,)), text("It is 4."))
    deltas, _ = streamed_content(world, [{"role": "user", "content": "2+2, carefully?"}])
    assert "".join(deltas) == f"{long}\n\nIt is 4."


def test_an_output_keyword_never_leaves_the_server_and_the_preset_ends_the_stream(
    world: World, server: ScriptedLLMServer
) -> None:
    server.enqueue(text("Our plan: the launch ", "code is 0000."))
    deltas, finish = streamed_content(world, ASK)
    assert "launch" not in "".join(deltas)
    # The agent offers tools: its text waited as a possible thought, and the preset replaces all of it.
    assert ("".join(deltas), finish) == (PRESET, "content_filter")


def test_an_answer_the_review_replaced_is_the_preset_when_not_streamed(
    world: World, server: ScriptedLLMServer
) -> None:
    server.enqueue(text(LEAK))
    answer = world.sdk().chat.completions.create(model="Guarded", messages=ASK)
    assert (answer.choices[0].message.content, answer.choices[0].finish_reason) == (PRESET, "content_filter")


def test_on_the_responses_api_an_output_keyword_never_leaves_the_server(
    world: World, server: ScriptedLLMServer
) -> None:
    server.enqueue(text("Our plan: the laun", "ch code is 0000."))
    events = list(world.sdk().responses.create(model="Guarded", input="What is the plan?", stream=True))
    deltas = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert "laun" not in deltas
    assert deltas.endswith(PRESET)
    last = events[-1]  # OpenAI's own shape: a filtered response is incomplete, for content_filter
    assert (last.type, last.response.incomplete_details.reason) == ("response.incomplete", "content_filter")
    assert last.response.output_text == PRESET
