"""A turn with client tools: they are offered beside the agent's, under the request's tool choice; a
call of one pauses the turn (its `client_tool_calls` event) while the agent's own calls of the same
round run here; the delivered results resume it, as steps of its trace and tool messages of the next
model call; a pause never answered ends it as stopped, and a paused turn is not a turn nobody follows."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from application.chat_turn.turn import ChatRequest, TurnHandle
from application.ports.chat_model import ModelChunk
from domain.agents.config import AgentConfig
from domain.conversations.conversation import MessageStatus
from domain.conversations.messages import ToolResultBlock
from domain.conversations.thoughts import AgentThought, ThoughtEvent
from domain.ids import AppId
from domain.tools.calls import ToolCall, ToolSpec
from domain.tools.client_tools import ChoiceMode, ClientToolResult, ClientTools, Resumption, ToolChoice
from tests.fakes import ScriptedModel
from tests.unit.application.harness import OWNER, Harness

WEATHER = ToolSpec("get_weather", "The weather.", {"type": "object", "properties": {"city": {"type": "string"}}})
HELLO = [ModelChunk(text="It is sunny.")]


def calling(*calls: ToolCall) -> list[ModelChunk]:
    return [ModelChunk(tool_calls=calls)]


async def clock(_: Mapping[str, Any]) -> str:
    return "12:00"


async def paused_turn(h: Harness, tools: ClientTools) -> tuple[TurnHandle, asyncio.Task[None], AgentThought]:
    handle = await h.start(ChatRequest(OWNER, "weather in Paris?", client_tools=tools))
    running = asyncio.create_task(h.spawner.run_all())
    for _ in range(500):
        pauses = [t for t in await h.thoughts(handle.task_id) if t.event is ThoughtEvent.CLIENT_TOOL_CALLS]
        if pauses:
            return handle, running, pauses[0]
        await asyncio.sleep(0.01)
    raise AssertionError("the turn never paused")


async def deliver(h: Harness, resumption: Resumption) -> bool:
    """Hand the results to the pause their first call belongs to, as ResumeTurn does."""
    [paused] = await h.client_tools.find(OWNER, resumption.results[0].call_id)
    return await h.client_tools.deliver(paused, resumption)


async def test_a_client_call_pauses_the_turn_and_its_result_resumes_it() -> None:
    model = ScriptedModel([calling(ToolCall("model-id", "get_weather", {"city": "Paris"})), HELLO])
    h = Harness(model)
    handle, running, pause = await paused_turn(h, ClientTools((WEATHER,)))
    [listed] = pause.tool_input["calls"]
    assert (listed["name"], listed["arguments"]) == ("get_weather", {"city": "Paris"})
    assert listed["id"].startswith("call_")  # memagent's own id, unique to the call
    assert await deliver(h, Resumption((ClientToolResult(listed["id"], "sun"),)))
    await running
    stored = h.store.messages[handle.message_id]
    assert (stored.status, stored.answer) == (MessageStatus.NORMAL, "It is sunny.")
    [result] = [b for b in model.calls[1][0][-1].content if isinstance(b, ToolResultBlock)]
    assert (result.tool_use_id, result.output) == (listed["id"], "sun")
    assert [s.observation for s in h.store.steps[handle.message_id] if s.tool == "get_weather"][-1] == "sun"


async def test_the_agents_own_calls_of_the_round_run_before_the_pause() -> None:
    calls = (ToolCall("a", "clock", {}), ToolCall("b", "get_weather", {"city": "Rome"}))
    h = Harness(ScriptedModel([calling(*calls), HELLO]), AgentConfig(AppId("default"), tool_names=("clock",)),
                tools={"clock": clock})
    handle, running, pause = await paused_turn(h, ClientTools((WEATHER,)))
    actions = [t for t in await h.thoughts(handle.task_id) if t.event is ThoughtEvent.AGENT_ACTION]
    assert [(a.tool, a.observation) for a in actions] == [("clock", "12:00")]
    [listed] = pause.tool_input["calls"]
    await deliver(h, Resumption((ClientToolResult(listed["id"], "rain"),)))
    await running
    assert h.store.messages[handle.message_id].status is MessageStatus.NORMAL


async def test_the_tool_choice_goes_with_the_first_call_and_the_resumes_own_with_the_next() -> None:
    model = ScriptedModel([calling(ToolCall("x", "get_weather", {})), HELLO])
    h = Harness(model)
    forced = ClientTools((WEATHER,), ToolChoice(ChoiceMode.NAMED, "get_weather"))
    handle, running, pause = await paused_turn(h, forced)
    [listed] = pause.tool_input["calls"]
    resumption = Resumption((ClientToolResult(listed["id"], "fog"),), ToolChoice(ChoiceMode.NONE))
    await deliver(h, resumption)
    await running
    first, _ = model.params
    assert first is not None
    assert first.tool_choice == ToolChoice(ChoiceMode.NAMED, "get_weather")
    assert [t.name for t in model.calls[1][1]] == []  # `none`: the client's tools are withheld


async def test_a_resumes_choice_of_a_tool_the_turn_does_not_offer_is_auto() -> None:
    model = ScriptedModel([calling(ToolCall("x", "get_weather", {})), HELLO])
    h = Harness(model)
    handle, running, pause = await paused_turn(h, ClientTools((WEATHER,)))
    [listed] = pause.tool_input["calls"]
    await deliver(h, Resumption((ClientToolResult(listed["id"], "fog"),), ToolChoice(ChoiceMode.NAMED, "other")))
    await running
    assert model.params[1] is None or model.params[1].tool_choice is None
    assert h.store.messages[handle.message_id].status is MessageStatus.NORMAL


async def test_a_pause_never_answered_ends_the_turn_as_stopped() -> None:
    h = Harness(ScriptedModel([calling(ToolCall("x", "get_weather", {}))]), client_tool_timeout=0.2)
    handle, running, _ = await paused_turn(h, ClientTools((WEATHER,)))
    await running
    stored = h.store.messages[handle.message_id]
    assert stored.status is MessageStatus.STOP
    assert "did not send the results of its tools" in stored.error
