"""Why a turn's answer ended: the model calls' finish reasons, kept by the loop, and the one its
`agent_end` event carries ("stop", "length", or "content_filter" on an output-review hit)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from application.chat_turn.agent_loop import AgentLoop
from application.chat_turn.aggregate_turn import aggregate
from application.chat_turn.run_chat_turn import TurnLimits
from application.chat_turn.turn import TurnHandle
from application.errors import ModelError
from application.ports.chat_model import ModelChunk
from domain.agents.config import AgentConfig
from domain.agents.review import KeywordReview
from domain.conversations.messages import Usage
from domain.conversations.thoughts import AgentThought, ThoughtEvent
from domain.ids import AppId
from domain.tools.calls import ToolCall
from tests.fakes import ScriptedModel
from tests.unit.application.harness import Harness

HELLO = [ModelChunk(text="Hel"), ModelChunk(text="lo"), ModelChunk(usage=Usage(10, 2), finish_reason="stop")]
CUT = [ModelChunk(text="It was a dark and"), ModelChunk(usage=Usage(10, 5), finish_reason="length")]
CALL = [ModelChunk(tool_calls=(ToolCall("c1", "now", {}),), finish_reason="tool_calls")]


async def now(_: Mapping[str, Any]) -> str:
    return "noon"


def with_tools(model: ScriptedModel, **config: Any) -> Harness:
    return Harness(model, AgentConfig(AppId("default"), tool_names=("now",), **config), {"now": now})


def keeping_loops(h: Harness) -> list[AgentLoop]:
    """The loops the harness's turns run, as they are built."""
    loops: list[AgentLoop] = []
    build = h.run_turn._parts.new_loop

    def recorded(**values: Any) -> AgentLoop:
        loops.append(build(**values))
        return loops[-1]

    h.run_turn._parts = replace(h.run_turn._parts, new_loop=recorded)
    return loops


async def end_of(h: Harness, handle: TurnHandle) -> AgentThought:
    return (await h.thoughts(handle.task_id))[-1]


async def test_the_loop_keeps_the_finish_reason_of_its_last_model_call() -> None:
    h = with_tools(ScriptedModel([CALL, CUT]))
    loops = keeping_loops(h)
    await h.turn("what time is it?")
    assert loops[0].state.finish_reason == "length"


async def test_the_loop_keeps_none_when_the_model_does_not_say_why_it_ended() -> None:
    h = Harness(ScriptedModel([[ModelChunk(text="ok")]]))
    loops = keeping_loops(h)
    await h.turn("hi")
    assert loops[0].state.finish_reason is None


async def test_a_completed_turn_ends_with_stop() -> None:
    h = Harness(ScriptedModel([HELLO]))
    handle = await h.turn("hi")
    end = await end_of(h, handle)
    assert (end.event, end.finish_reason) == (ThoughtEvent.AGENT_END, "stop")
    assert (await aggregate(h.follow(handle.task_id))).finish_reason == "stop"


async def test_a_model_that_does_not_say_why_it_ended_ends_the_turn_with_stop() -> None:
    h = Harness(ScriptedModel([[ModelChunk(text="ok")]]))
    assert (await end_of(h, await h.turn("hi"))).finish_reason == "stop"


async def test_an_answer_cut_at_the_token_limit_ends_with_length() -> None:
    h = Harness(ScriptedModel([CUT]))
    handle = await h.turn("tell me a story")
    assert (await end_of(h, handle)).finish_reason == "length"
    result = await aggregate(h.follow(handle.task_id))
    assert (result.answer, result.finish_reason) == ("It was a dark and", "length")


async def test_only_the_last_model_call_decides_the_finish_reason() -> None:
    cut_call = [replace(CALL[0], finish_reason="length")]  # an earlier call's reason does not count
    h = with_tools(ScriptedModel([cut_call, HELLO]))
    assert (await end_of(h, await h.turn("what time is it?"))).finish_reason == "stop"


async def test_an_output_review_hit_ends_with_content_filter() -> None:
    review = KeywordReview(("hello",), "[removed]")
    h = Harness(ScriptedModel([HELLO]), AgentConfig(AppId("default"), output_review=review))
    handle = await h.turn("greet me")
    end = await end_of(h, handle)
    assert (end.answer, end.finish_reason) == ("[removed]", "content_filter")
    assert (await aggregate(h.follow(handle.task_id))).finish_reason == "content_filter"


async def test_an_output_review_hit_on_a_cut_answer_still_ends_with_content_filter() -> None:
    review = KeywordReview(("dark",), "[removed]")
    h = Harness(ScriptedModel([CUT]), AgentConfig(AppId("default"), output_review=review))
    assert (await end_of(h, await h.turn("tell me a story"))).finish_reason == "content_filter"


async def test_an_input_review_hit_ends_with_stop() -> None:
    review = KeywordReview(("forbidden",), "I can't discuss that.")
    h = Harness(ScriptedModel([CUT]), AgentConfig(AppId("default"), input_review=review))
    handle = await h.turn("the FORBIDDEN thing")
    assert h.model.calls == []
    assert (await end_of(h, handle)).finish_reason == "stop"


async def test_only_the_agent_end_event_carries_a_finish_reason() -> None:
    h = with_tools(ScriptedModel([CALL, CUT]), stream_thoughts=True)
    thoughts = await h.thoughts((await h.turn("what time is it?")).task_id)
    *others, end = thoughts
    assert (end.event, end.finish_reason) == (ThoughtEvent.AGENT_END, "length")
    assert {t.finish_reason for t in others} == {""}


async def test_a_turn_that_fails_ends_with_an_error_and_no_finish_reason() -> None:
    def fail(*_: object) -> list[ModelChunk]:
        raise ModelError("The model did not answer.")

    h = Harness(ScriptedModel([fail]))
    handle = await h.turn("hi")
    end = await end_of(h, handle)
    assert (end.event, end.finish_reason) == (ThoughtEvent.ERROR, "")
    assert (await aggregate(h.follow(handle.task_id))).finish_reason == ""


async def test_a_turn_past_its_limit_ends_with_timeout_and_no_finish_reason() -> None:
    async def hang(_: int) -> None:
        await asyncio.sleep(10)

    model = ScriptedModel([CUT])
    model.on_chunk = hang
    h = Harness(model)
    h.run_turn._limits = TurnLimits(turn_timeout=0.05)
    end = await end_of(h, await h.turn("slow"))
    assert (end.event, end.finish_reason) == (ThoughtEvent.TIMEOUT, "")
