"""What a turn tells the Metrics port (its in-process adapter records it): the turn's start and end
with its status, the time to its first token, each tool call's outcome, and the upkeep lag."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from application.chat_turn.turn import ChatRequest
from application.memory.schedule_upkeep import UpkeepScheduler
from application.ports.chat_model import ModelChunk
from domain.agents.config import AgentConfig
from domain.agents.review import KeywordReview
from domain.conversations.messages import Usage
from domain.ids import AppId, EndUserId
from domain.tools.calls import INVALID_ARGUMENTS_KEY, ToolCall
from tests.fakes import CollectingSpawner, FakeClock, ScriptedModel
from tests.unit.application.harness import OWNER, Harness

HELLO = [ModelChunk(text="Hel"), ModelChunk(text="lo"), ModelChunk(usage=Usage(10, 2, 0.5))]
AGENT = AgentConfig(AppId("default"), model="fast", tool_names=("echo", "broken"))


async def echo(args: Mapping[str, Any]) -> str:
    return str(args.get("text", ""))


async def broken(_: Mapping[str, Any]) -> str:
    raise RuntimeError("inside the tool")


def tools_harness(*calls: ToolCall) -> Harness:
    model = ScriptedModel([[ModelChunk(tool_calls=calls)], HELLO])
    return Harness(model, AGENT, tools={"echo": echo, "broken": broken})


async def test_a_turn_counts_as_active_while_it_runs_then_ends_once_with_its_status_and_duration() -> None:
    model = ScriptedModel([HELLO])
    h = Harness(model, AgentConfig(AppId("default"), model="fast"))
    seen_active: list[int] = []

    async def look(_: int) -> None:
        seen_active.append(h.metrics.active_turns)

    model.on_chunk = look
    await h.turn("hi")
    assert seen_active == [1, 1, 1]
    assert h.metrics.active_turns == 0
    assert h.metrics.of("turn_started") == [("default", "fast")]
    [(agent, profile, status, seconds)] = h.metrics.of("turn_ended")
    assert (agent, profile, status) == ("default", "fast", "normal")
    assert isinstance(seconds, float)
    assert seconds >= 0


async def test_the_time_to_the_first_token_is_the_one_the_message_records() -> None:
    h = Harness(ScriptedModel([HELLO]), AgentConfig(AppId("default"), model="fast"))
    handle = await h.turn("hi")
    stored = h.store.messages[handle.message_id]
    assert stored.first_token_latency is not None
    assert h.metrics.of("first_token") == [("default", "fast", stored.first_token_latency)]


async def test_a_stopped_turn_ends_with_status_stop_and_is_no_longer_active() -> None:
    model = ScriptedModel([[ModelChunk(text="par"), ModelChunk(text="tial")]])
    h = Harness(model)
    handle = await h.start(ChatRequest(OWNER, "long answer please"))

    async def stall(index: int) -> None:
        if index == 1:
            await h.tasks.request_stop(handle.task_id, OWNER)
            await asyncio.sleep(30)

    model.on_chunk = stall
    await asyncio.wait_for(h.spawner.run_all(), 5)
    assert [status for _, _, status, _ in h.metrics.of("turn_ended")] == ["stop"]
    assert h.metrics.active_turns == 0


async def test_a_turn_whose_model_fails_ends_with_status_error() -> None:
    def fail(*_: object) -> list[ModelChunk]:
        raise RuntimeError("boom")

    h = Harness(ScriptedModel([fail]))
    await h.turn("are you there?")
    assert [status for _, _, status, _ in h.metrics.of("turn_ended")] == ["error"]


async def test_a_query_the_input_review_refuses_is_a_normal_turn_without_a_first_model_token() -> None:
    review = KeywordReview(("forbidden",))
    h = Harness(ScriptedModel([]), AgentConfig(AppId("default"), input_review=review))
    await h.turn("something forbidden")
    assert [status for _, _, status, _ in h.metrics.of("turn_ended")] == ["normal"]


async def test_each_tool_call_counts_once_with_its_outcome_after_its_retries() -> None:
    h = tools_harness(ToolCall("c1", "echo", {"text": "hi"}), ToolCall("c2", "broken", {}))
    await h.turn("use both")
    assert sorted(h.metrics.of("tool_call")) == [("broken", "failed"), ("echo", "ok")]


async def test_a_call_of_a_tool_the_turn_did_not_offer_counts_under_unknown_not_the_name_the_model_wrote() -> None:
    unparseable = {INVALID_ARGUMENTS_KEY: "{not json"}
    h = tools_harness(ToolCall("c1", "user-42-conversation-9", {}), ToolCall("c2", "echo", unparseable))
    await h.turn("use a made-up tool")
    assert sorted(h.metrics.of("tool_call")) == [("echo", "invalid_arguments"), ("unknown", "failed")]


async def test_the_labels_of_a_turn_never_name_its_end_user_or_its_conversation() -> None:
    h = tools_harness(ToolCall("c1", "echo", {"text": "hi"}))
    handle = await h.start(ChatRequest(OWNER, "hi", end_user=EndUserId("user-7")))
    await h.spawner.run_all()
    ids = {OWNER, "user-7", handle.conversation_id, handle.message_id, handle.task_id}
    labels = {value for _, arguments in h.metrics.recorded for value in arguments if isinstance(value, str)}
    assert labels
    assert not labels & ids


async def test_the_upkeep_lag_is_the_age_of_the_oldest_upkeep_not_finished_and_zero_when_none_is() -> None:
    h = Harness(ScriptedModel([HELLO, HELLO]))
    first, second = [h.store.messages[(await h.turn(f"turn {n}")).message_id] for n in range(2)]
    clock, spawner = FakeClock(step=0), CollectingSpawner()  # the spawner keeps the upkeeps until run
    scheduler = UpkeepScheduler(h.upkeep, spawner, clock)
    assert scheduler.lag() == 0.0
    scheduler.after_end(h.config, first)
    clock.advance(3.0)
    scheduler.after_end(h.config, second)  # another conversation: an upkeep of its own
    clock.advance(2.0)
    assert scheduler.lag() == 5.0
    await spawner.run_all()
    assert scheduler.lag() == 0.0
