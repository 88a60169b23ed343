from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from application.chat_turn.aggregate_turn import aggregate
from application.chat_turn.run_chat_turn import TurnLimits
from application.chat_turn.turn import ChatRequest, TurnHandle
from application.errors import Conflict, InvalidInput, ModelError, NotFound
from application.ports.chat_model import ModelChunk
from application.tasks.sweep_stale_turns import SweepStaleTurns, SweepTimes
from domain.accounts.viewers import Viewer
from domain.agents.config import AgentConfig, ModelCapabilities
from domain.agents.review import KeywordReview
from domain.conversations.conversation import Message, MessageStatus
from domain.conversations.messages import Role, ToolResultBlock, Usage
from domain.conversations.thoughts import ThoughtEvent, streamed_answer
from domain.ids import AppId, ConversationId, OwnerId
from domain.tools.calls import ToolCall
from tests.fake_message_store import FakeMessageStore
from tests.fakes import T0, CollectingSpawner, FakeClock, ScriptedModel, SequentialIds
from tests.unit.application.harness import OWNER, Harness

HELLO = [ModelChunk(text="Hel"), ModelChunk(text="lo"), ModelChunk(usage=Usage(10, 2, 0.5))]


async def test_query_is_persisted_before_the_turn_runs() -> None:
    h = Harness(ScriptedModel([HELLO]))
    handle = await h.start(ChatRequest(OWNER, "remember me"))
    stored = h.store.messages[handle.message_id]
    assert stored.query == "remember me"
    assert stored.status is MessageStatus.RUNNING
    assert (await h.thoughts(handle.task_id)) == []
    await h.spawner.run_all()


async def test_the_event_log_is_opened_for_the_turn_before_the_turn_runs() -> None:
    h = Harness(ScriptedModel([HELLO]))
    handle = await h.start(ChatRequest(OWNER, "hi"))
    assert h.log.opened == [handle.task_id]
    assert (await h.thoughts(handle.task_id)) == []  # opened, and nothing appended yet
    await h.spawner.run_all()
    assert (await h.thoughts(handle.task_id))


async def pause(_: int) -> None:
    await asyncio.sleep(0)  # the model's next chunk is not there yet: the loop runs other tasks


async def test_a_turn_streams_deltas_and_ends_with_agent_end_and_a_stored_answer() -> None:
    model = ScriptedModel([HELLO])
    model.on_chunk = pause
    h = Harness(model)
    handle = await h.turn("hi")
    assert (await h.events(handle)) == [
        "long_term_memory_recall", "agent_message", "agent_message", "agent_message", "agent_end",
    ]
    stored = h.store.messages[handle.message_id]
    assert (stored.answer, stored.status) == ("Hello", MessageStatus.NORMAL)
    assert stored.usage == Usage(10, 2, 0.5)
    closing = (await h.thoughts(handle.task_id))[-2]
    assert (closing.answer, closing.total_token_count, closing.total_price) == ("", 12, 0.5)


async def test_deltas_streamed_faster_than_the_log_stores_them_stay_one_event_each_in_order() -> None:
    h = Harness(ScriptedModel([HELLO]))  # no pause between chunks: nothing is stored in between
    handle = await h.turn("hi")
    deltas = [t for t in await h.thoughts(handle.task_id) if t.event.value == "agent_message"]
    assert [(d.answer, d.total_token_count) for d in deltas] == [("Hel", 0), ("lo", 0), ("", 12)]


async def test_answer_deltas_share_one_id_and_aggregate_to_the_answer() -> None:
    h = Harness(ScriptedModel([HELLO]))
    handle = await h.turn("hi")
    deltas = [t for t in (await h.thoughts(handle.task_id)) if t.event.value == "agent_message"]
    assert len({d.id for d in deltas}) == 1
    result = await aggregate(h.follow(handle.task_id))
    assert (result.status, result.answer, result.total_token_count) == (MessageStatus.NORMAL, "Hello", 12)


async def test_the_second_turn_prompt_holds_the_first_exchange() -> None:
    h = Harness(ScriptedModel([HELLO, [ModelChunk(text="again")]]))
    first = await h.turn("my name is Ada")
    second = await h.turn("what is my name?", first.conversation_id)
    sent = h.model.calls[1][0]
    assert [m.role for m in sent] == [Role.SYSTEM, Role.USER, Role.ASSISTANT, Role.USER]
    assert [m.text for m in sent[1:]] == ["my name is Ada", "Hello", "what is my name?"]
    steps = h.store.steps[second.message_id]
    assert "my name is Ada" in steps[-1].prompt


async def test_history_is_rebuilt_from_the_record_when_memory_is_empty() -> None:
    h = Harness(ScriptedModel([HELLO, [ModelChunk(text="x")]]))
    first = await h.turn("first question")
    h.memory.evict_window(first.conversation_id)
    await h.turn("second", first.conversation_id)
    assert [m.text for m in h.model.calls[1][0][1:3]] == ["first question", "Hello"]


async def test_a_malformed_cached_window_is_rebuilt_from_the_record_and_the_next_turns_work() -> None:
    h = Harness(ScriptedModel([HELLO, [ModelChunk(text="x")], [ModelChunk(text="y")]]))
    first = await h.turn("first question")
    window = await h.memory.get_window(first.conversation_id)
    assert window is not None
    assert len(window) == 2
    await h.memory.save_window(first.conversation_id, window[:-1])  # one message cut: a half-written entry
    second = await h.turn("second", first.conversation_id)
    third = await h.turn("third", first.conversation_id)
    assert [h.store.messages[t.message_id].status for t in (second, third)] == [MessageStatus.NORMAL] * 2
    assert [m.text for m in h.model.calls[1][0][1:3]] == ["first question", "Hello"]
    assert len(await h.memory.get_window(first.conversation_id) or []) == 6


async def test_a_malformed_record_fails_the_turn_with_a_readable_history_error() -> None:
    class StoreWithABrokenRecord(FakeMessageStore):
        async def recent_messages(self, conversation_id: ConversationId, limit: int) -> list[Message]:
            return [replace(m, answer="") for m in await super().recent_messages(conversation_id, limit)]

    h = Harness(ScriptedModel([HELLO, [ModelChunk(text="x")]]), store=StoreWithABrokenRecord())
    first = await h.turn("first question")
    h.memory.evict_window(first.conversation_id)
    second = await h.turn("second", first.conversation_id)
    failed = h.store.messages[second.message_id]
    assert failed.status is MessageStatus.ERROR
    assert "stored history is malformed" in failed.error


async def test_tool_calls_of_one_round_run_concurrently_and_are_traced() -> None:
    started: list[str] = []
    both_started = asyncio.Event()

    async def slow(args: Mapping[str, Any]) -> str:
        started.append(str(args["n"]))
        if len(started) == 2:
            both_started.set()
        await asyncio.wait_for(both_started.wait(), 1)  # deadlocks unless both run at once
        return f"done {args['n']}"

    calls = (ToolCall("c1", "slow", {"n": 1}), ToolCall("c2", "slow", {"n": 2}))
    model = ScriptedModel([[ModelChunk(text="thinking"), ModelChunk(tool_calls=calls)], HELLO])
    h = Harness(model, AgentConfig(AppId("default"), tool_names=("slow",), stream_thoughts=True), tools={"slow": slow})
    handle = await h.turn("do two things")
    assert (await h.events(handle))[1:5] == ["agent_message", "agent_thought", "agent_action", "agent_action"]
    step = h.store.steps[handle.message_id][1]
    assert step.thought == "thinking"
    assert step.tool == "slow;slow"
    assert json.loads(step.observation) == {"slow": "done 1", "slow#2": "done 2"}
    actions = [s for s in h.store.steps[handle.message_id] if s.event == "agent_action"]
    assert [(a.tool, dict(a.tool_input), a.observation) for a in actions] == [
        ("slow", {"n": 1}, "done 1"), ("slow", {"n": 2}, "done 2"),
    ]
    results = [b for b in model.calls[1][0][-1].content if isinstance(b, ToolResultBlock)]
    assert [r.output for r in results] == ["done 1", "done 2"]


async def test_sequential_tools_run_one_after_another_in_order_after_the_concurrent_ones() -> None:
    log: list[str] = []

    async def book(args: Mapping[str, Any]) -> str:
        log.append(f"book {args['n']} starts")
        await asyncio.sleep(0.01)
        log.append(f"book {args['n']} ends")
        return "booked"

    async def look(args: Mapping[str, Any]) -> str:
        log.append(f"look {args['n']} starts")
        await asyncio.sleep(0.01)
        log.append(f"look {args['n']} ends")
        return "seen"

    calls = (ToolCall("c1", "book", {"n": 1}), ToolCall("c2", "look", {"n": 1}),
             ToolCall("c3", "book", {"n": 2}), ToolCall("c4", "look", {"n": 2}))
    model = ScriptedModel([[ModelChunk(tool_calls=calls)], HELLO])
    config = AgentConfig(AppId("default"), tool_names=("book", "look"))
    h = Harness(model, config, tools={"book": book, "look": look}, sequential_tools=("book",))
    handle = await h.turn("book twice, look twice")
    assert log[:2] == ["look 1 starts", "look 2 starts"]  # the reads overlap
    assert log[4:] == ["book 1 starts", "book 1 ends", "book 2 starts", "book 2 ends"]
    results = [b for b in model.calls[1][0][-1].content if isinstance(b, ToolResultBlock)]
    assert [r.tool_use_id for r in results] == ["c1", "c2", "c3", "c4"]  # the model's order
    assert h.store.messages[handle.message_id].status is MessageStatus.NORMAL


async def test_model_and_tool_text_no_store_can_hold_is_kept_with_replacement_characters() -> None:
    async def garbled(args: Mapping[str, Any]) -> str:
        return "tool says \x00 and \udc80"

    odd = ToolCall("c1", "garbled", {"nul": "a\x00b", "half": "\ud83d", "n": float("nan"), "deep": [float("inf")]})
    model = ScriptedModel([[ModelChunk(tool_calls=(odd,))], [ModelChunk(text="ans\x00wer \ud83d")]])
    h = Harness(model, AgentConfig(AppId("default"), tool_names=("garbled",)), tools={"garbled": garbled})
    handle = await h.turn("go")
    stored = h.store.messages[handle.message_id]
    assert (stored.status, stored.answer) == (MessageStatus.NORMAL, "ans\ufffdwer \ufffd")
    action = next(s for s in h.store.steps[handle.message_id] if s.event == "agent_action")
    assert dict(action.tool_input) == {"nul": "a\ufffdb", "half": "\ufffd", "n": "nan", "deep": ["inf"]}
    assert action.observation == "tool says \ufffd and \ufffd"
    for thought in (await h.thoughts(handle.task_id)):  # every event can be sent as strict JSON, in UTF-8
        json.dumps(thought.to_dict(), ensure_ascii=False, allow_nan=False).encode()


async def test_after_max_tool_rounds_the_model_must_answer_without_tools() -> None:
    async def echo(args: Mapping[str, Any]) -> str:
        return "again"

    loop_forever = [ModelChunk(tool_calls=(ToolCall("c", "echo", {}),))]
    model = ScriptedModel([loop_forever, loop_forever, HELLO])
    h = Harness(model, AgentConfig(AppId("default"), tool_names=("echo",), max_tool_rounds=2), {"echo": echo})
    handle = await h.turn("loop")
    assert [len(tools) for _, tools in model.calls] == [1, 1, 0]
    assert "without tools" in model.calls[2][0][-1].text
    assert h.store.messages[handle.message_id].answer == "Hello"


async def test_a_raising_tool_becomes_a_plain_error_the_model_sees() -> None:
    async def broken(args: Mapping[str, Any]) -> str:
        raise RuntimeError("Traceback: secret internals")

    model = ScriptedModel([[ModelChunk(tool_calls=(ToolCall("c", "broken", {}),))], HELLO])
    h = Harness(model, AgentConfig(AppId("default"), tool_names=("broken",)), {"broken": broken})
    handle = await h.turn("try it")
    seen = model.calls[1][0][-1].content[0]
    assert isinstance(seen, ToolResultBlock)
    assert seen.is_error
    assert "secret" not in seen.output
    assert "broken" in seen.output
    assert h.store.messages[handle.message_id].status is MessageStatus.NORMAL


async def test_a_model_failure_ends_the_turn_with_error_and_keeps_the_query() -> None:
    def fail(*_: object) -> list[ModelChunk]:
        raise ModelError("The model at the configured URL did not answer.")

    h = Harness(ScriptedModel([fail]))
    handle = await h.turn("are you there?")
    assert (await h.events(handle))[-1] == "error"
    stored = h.store.messages[handle.message_id]
    assert (stored.query, stored.status) == ("are you there?", MessageStatus.ERROR)
    assert "did not answer" in stored.error
    assert (await h.thoughts(handle.task_id))[-1].observation == stored.error


async def test_an_unexpected_bug_ends_the_turn_with_a_plain_error() -> None:
    def crash(*_: object) -> list[ModelChunk]:
        raise KeyError("internal detail")

    h = Harness(ScriptedModel([crash]))
    handle = await h.turn("hi")
    stored = h.store.messages[handle.message_id]
    assert stored.status is MessageStatus.ERROR
    assert "internal detail" not in stored.error


async def test_a_stop_while_the_model_stalls_keeps_the_partial_answer_and_closes_the_stream() -> None:
    model = ScriptedModel([[ModelChunk(text="par"), ModelChunk(text="tial"), ModelChunk(text="never")]])
    h = Harness(model)
    handle = await h.start(ChatRequest(OWNER, "long answer please"))

    async def stall_after_second(index: int) -> None:
        if index == 2:
            await h.tasks.request_stop(handle.task_id, OWNER)
            await asyncio.sleep(30)  # the model hangs mid-stream

    model.on_chunk = stall_after_second
    await asyncio.wait_for(h.spawner.run_all(), 5)
    stored = h.store.messages[handle.message_id]
    assert (stored.status, stored.answer) == (MessageStatus.STOP, "partial")
    assert (await h.events(handle))[-1] == "stop"
    assert model.closed == 1


async def stopped_at_chunk(h: Harness, model: ScriptedModel, query: str, index: int) -> TurnHandle:
    """Start a turn, ask it to stop when the model sends chunk `index` (then the model hangs), run it out."""
    handle = await h.start(ChatRequest(OWNER, query))

    async def stall(chunk: int) -> None:
        if chunk == index:
            await h.tasks.request_stop(handle.task_id, OWNER)
            await asyncio.sleep(30)

    model.on_chunk = stall
    await asyncio.wait_for(h.spawner.run_all(), 5)
    return handle


async def test_a_stopped_turn_counts_its_partial_answer_and_its_last_delta_carries_estimated_totals() -> None:
    model = ScriptedModel([[ModelChunk(text="three words here"), ModelChunk(text=" never")]])
    h = Harness(model)
    handle = await stopped_at_chunk(h, model, "long answer please", 1)
    stored = h.store.messages[handle.message_id]
    assert stored.status is MessageStatus.STOP
    assert stored.usage.completion_tokens == 3  # the word tokenizer counted "three words here"
    assert stored.usage.prompt_tokens > 0
    assert stored.usage.estimated
    thoughts = (await h.thoughts(handle.task_id))
    last_delta = [t for t in thoughts if t.event.value == "agent_message"][-1]
    assert last_delta.answer == ""
    assert last_delta.total_token_count == stored.usage.total_tokens
    assert last_delta.tokens_estimated
    assert thoughts[-1].event.value == "stop"


async def test_a_turn_nobody_follows_any_more_is_stopped_as_if_asked() -> None:
    model = ScriptedModel([[ModelChunk(text="part"), ModelChunk(text="never")]])
    h = Harness(model)
    handle = await h.start(ChatRequest(OWNER, "hello?"))

    async def client_leaves(index: int) -> None:
        if index == 1:
            # No client follows: the grace from the turn's start runs out, and any lease would have lapsed.
            h.clock.advance(h.limits.watch.client_grace + 1)
            h.time.advance(h.limits.watch.client_grace + 1)
            await h.presence.worker_beat(handle.task_id, h.limits.watch.worker_lease)  # the worker's beats go on
            await asyncio.sleep(30)

    model.on_chunk = client_leaves
    await asyncio.wait_for(h.spawner.run_all(), 5)
    stored = h.store.messages[handle.message_id]
    assert (stored.status, stored.answer) == (MessageStatus.STOP, "part")
    assert "No client" in stored.error


async def test_a_finished_turn_stays_replayable_by_its_owner() -> None:
    h = Harness(ScriptedModel([HELLO]))
    handle = await h.turn("hi")
    assert (await h.follow.owned(handle.task_id, Viewer(OWNER))).message_id == handle.message_id
    with pytest.raises(NotFound):
        await h.follow.owned(handle.task_id, Viewer(OwnerId("mallory")))


async def test_a_turn_past_its_limit_ends_with_timeout() -> None:
    async def hang(index: int) -> None:
        await asyncio.sleep(10)

    model = ScriptedModel([HELLO])
    model.on_chunk = hang
    h = Harness(model)
    h.run_turn._limits = TurnLimits(turn_timeout=0.05)
    handle = await h.turn("slow")
    assert h.store.messages[handle.message_id].status is MessageStatus.TIMEOUT
    assert (await h.events(handle))[-1] == "timeout"


async def test_an_input_review_hit_answers_the_preset_response_without_the_model() -> None:
    review = KeywordReview(("forbidden",), "I can't discuss that.")
    h = Harness(ScriptedModel([HELLO]), AgentConfig(AppId("default"), input_review=review))
    handle = await h.turn("tell me the FORBIDDEN thing")
    assert h.model.calls == []
    assert h.store.messages[handle.message_id].answer == "I can't discuss that."
    assert (await h.events(handle))[-1] == "agent_end"


async def test_an_input_review_hit_reads_no_memory_and_its_step_says_the_review_ended_the_turn() -> None:
    review = KeywordReview(("forbidden",), "I can't discuss that.")
    h = Harness(ScriptedModel([HELLO]), AgentConfig(AppId("default"), input_review=review), memory_tiers=True)
    reads: list[str] = []
    for name in ("get_window", "archive", "entity_sheet"):
        real = getattr(h.memory, name)

        async def counted(*args: Any, _real: Any = real, _name: str = name) -> Any:
            reads.append(_name)
            return await _real(*args)

        setattr(h.memory, name, counted)
    handle = await h.turn("tell me the FORBIDDEN thing")
    assert reads == []
    assert h.embedder.embedded == []
    assert (await h.events(handle)) == ["agent_message", "agent_end"]
    [step] = h.store.steps[handle.message_id]
    assert step.event == "agent_message"
    assert step.answer == "I can't discuss that."
    assert "input review" in step.thought


async def test_an_output_review_hit_replaces_the_stored_answer() -> None:
    review = KeywordReview(("hello",), "[removed]")
    h = Harness(ScriptedModel([HELLO]), AgentConfig(AppId("default"), output_review=review))
    handle = await h.turn("greet me")
    assert h.store.messages[handle.message_id].answer == "[removed]"
    assert (await aggregate(h.follow(handle.task_id))).answer == "[removed]"


async def test_an_exchange_the_output_review_replaced_gets_no_title_and_no_memory_upkeep() -> None:
    review = KeywordReview(("hello",), "[removed]")
    h = Harness(ScriptedModel([HELLO]), AgentConfig(AppId("default"), output_review=review), memory_tiers=True)
    handle = await h.turn("greet me")
    assert h.store.conversations[handle.conversation_id].title == ""  # the model's words are in no title
    assert await h.short_term.window(h.store.conversations[handle.conversation_id], h.config) == []


async def test_react_mode_runs_a_fenced_tool_call_and_hides_the_json_from_the_answer() -> None:
    async def now(args: Mapping[str, Any]) -> str:
        return "noon"

    fenced = 'I need the time.\n```json\n{"name": "now", "args": {}}\n```'
    model = ScriptedModel(
        [[ModelChunk(text=fenced)], [ModelChunk(text="It is noon.")]],
        ModelCapabilities(tool_call=False, agent_thought=True),
    )
    h = Harness(model, AgentConfig(AppId("default"), tool_names=("now",)), {"now": now})
    handle = await h.turn("what time is it?")
    assert model.calls[0][1] == []  # no native tools: they are described in the prompt
    assert "now" in model.calls[0][0][0].text
    assert h.store.messages[handle.message_id].answer == "It is noon."
    assert h.store.steps[handle.message_id][1].thought == "I need the time."


REASONING_ONLY = ModelCapabilities(tool_call=False, agent_thought=True)


async def test_a_react_answer_streams_as_it_comes_and_never_shows_an_action_block() -> None:
    async def now(args: Mapping[str, Any]) -> str:
        return "noon"

    action = [ModelChunk(text="``"), ModelChunk(text='`json\n{"name": "now", "args": {}}\n```')]
    answer = [ModelChunk(text="It is "), ModelChunk(text="noon, "), ModelChunk(text="friend.")]
    model = ScriptedModel([action, answer], REASONING_ONLY)
    model.on_chunk = pause  # the sender sends each delta before the next comes
    h = Harness(model, AgentConfig(AppId("default"), tool_names=("now",), max_tool_rounds=2), {"now": now})
    handle = await h.turn("what time is it?")
    deltas = [t.answer for t in await h.thoughts(handle.task_id) if t.event.value == "agent_message"]
    assert deltas[:2] == ["It is ", "noon, "]  # streamed delta by delta (the totals ride on the last)
    assert "```" not in "".join(deltas)
    assert h.store.messages[handle.message_id].answer == "It is noon, friend."


async def test_a_stopped_react_turn_keeps_its_partial_answer() -> None:
    async def now(args: Mapping[str, Any]) -> str:
        return "noon"

    model = ScriptedModel([[ModelChunk(text="The answer "), ModelChunk(text="is"), ModelChunk(text=" never")]],
                          REASONING_ONLY)
    h = Harness(model, AgentConfig(AppId("default"), tool_names=("now",)), {"now": now})
    handle = await stopped_at_chunk(h, model, "tell me", 2)
    stored = h.store.messages[handle.message_id]
    assert (stored.status, stored.answer) == (MessageStatus.STOP, "The answer is")


async def test_persistence_failure_at_the_end_still_ends_the_stream_with_error() -> None:
    h = Harness(ScriptedModel([HELLO]))
    h.store.fail_finish = True
    handle = await h.turn("hi")
    assert (await h.events(handle))[-1] == "error"


async def test_a_save_that_fails_while_the_database_restarts_is_retried_and_the_turn_ends_normally() -> None:
    h = Harness(ScriptedModel([HELLO]), save_retry=5.0)
    h.store.failing_finishes = 2
    handle = await h.turn("hi")
    assert (await h.events(handle))[-1] == "agent_end"
    saved = h.store.messages[handle.message_id]
    assert (saved.status, saved.answer) == (MessageStatus.NORMAL, "Hello")


async def test_a_database_down_past_the_retry_keeps_the_answer_and_the_cause_for_the_sweep() -> None:
    h = Harness(ScriptedModel([HELLO]), save_retry=0.3)
    h.store.fail_finish = True
    handle = await h.turn("hi")
    end = (await h.thoughts(handle.task_id))[-1]
    assert (end.event.value, end.answer) == ("error", "Hello")  # the streamed answer travels with the end
    assert end.observation == "The database is unavailable."
    assert h.store.messages[handle.message_id].status is MessageStatus.RUNNING  # no bare error over it

    h.store.fail_finish = False  # the database is back; the worker's lease has lapsed
    sweep = SweepStaleTurns(h.store, h.presence, CollectingSpawner(), h.log, FakeClock(T0 + timedelta(hours=1)),
                            SequentialIds(), SweepTimes(worker_lease=15, retention=60, confirm_after=0))
    h.time.advance(60)
    assert await sweep() == 1
    swept = h.store.messages[handle.message_id]
    assert (swept.status, swept.answer, swept.error) == (MessageStatus.ERROR, "Hello", "The database is unavailable.")


@pytest.mark.parametrize(
    "refusal", [InvalidInput("The database refused a value."), UnicodeEncodeError("utf-8", "\ud83d", 0, 1, "x")]
)
async def test_an_outcome_the_store_refuses_is_saved_as_a_bare_error_so_the_conversation_goes_on(
    refusal: BaseException,
) -> None:
    h = Harness(ScriptedModel([HELLO, HELLO]))
    h.store.refuse_full_outcome = refusal
    first = await h.turn("hi")
    assert (await h.events(first))[-1] == "error"
    stored = h.store.messages[first.message_id]
    assert (stored.status, stored.answer) == (MessageStatus.ERROR, "")
    assert stored.error
    h.store.refuse_full_outcome = None
    second = await h.turn("again", first.conversation_id)  # not refused as a turn still running
    assert (await h.events(second))[-1] == "agent_end"


@pytest.mark.parametrize("query", ["", "   ", "x" * 1025, "half an emoji \ud83d", "a NUL \x00 inside"])
async def test_bad_queries_are_refused_and_nothing_is_written(query: str) -> None:
    h = Harness(ScriptedModel([HELLO]))
    with pytest.raises(InvalidInput):
        await h.start(ChatRequest(OWNER, query))
    assert h.store.messages == {}
    assert h.store.conversations == {}


async def test_someone_elses_conversation_is_not_found_and_nothing_is_written() -> None:
    h = Harness(ScriptedModel([HELLO, HELLO]))
    mine = await h.turn("hi")
    with pytest.raises(NotFound):
        await h.start(ChatRequest(OwnerId("mallory"), "hi", ConversationId(mine.conversation_id)))
    assert len(h.store.messages) == 1


async def test_following_a_finished_task_from_its_last_event_ends_at_once() -> None:
    h = Harness(ScriptedModel([HELLO]))
    handle = await h.turn("hi")
    last = len(await h.thoughts(handle.task_id))
    assert [e async for e in h.follow(handle.task_id, after=last)] == []


async def test_reasoning_before_a_tool_call_streams_at_once_and_its_thought_event_takes_it_out_of_the_answer() -> None:
    async def now(args: Mapping[str, Any]) -> str:
        return "noon"

    thinking = [ModelChunk(text="let me look"), ModelChunk(tool_calls=(ToolCall("c", "now", {}),))]
    model = ScriptedModel([thinking, HELLO])
    config = AgentConfig(AppId("default"), tool_names=("now",), stream_thoughts=False)
    h = Harness(model, config, {"now": now})
    handle = await h.turn("time?")
    events = await h.thoughts(handle.task_id)
    [looked] = [t for t in events if t.answer == "let me look"]
    assert looked.tentative  # it went out at once, marked as text that may be a thought
    [thought] = [t for t in events if t.event is ThoughtEvent.AGENT_THOUGHT]
    assert (thought.id, thought.thought) == (looked.id, "let me look")
    assert streamed_answer(events) == "Hello"
    assert h.store.messages[handle.message_id].answer == "Hello"
    assert h.store.steps[handle.message_id][1].thought == "let me look"


async def test_images_are_dropped_with_a_note_when_the_model_cannot_see_them() -> None:
    h = Harness(ScriptedModel([HELLO], ModelCapabilities(tool_call=True, image_input=False)))
    handle = await h.start(ChatRequest(OWNER, "look", image_urls=("https://example.com/a.png",)))
    await h.spawner.run_all()
    assert len(h.model.calls[0][0][-1].content) == 1
    notes = [s.thought for s in h.store.steps[handle.message_id]]
    assert any("1 image(s) dropped" in n for n in notes)


async def test_images_reach_a_model_that_accepts_them() -> None:
    h = Harness(ScriptedModel([HELLO], ModelCapabilities(tool_call=True, image_input=True)))
    await h.start(ChatRequest(OWNER, "look", image_urls=("https://example.com/a.png",)))
    await h.spawner.run_all()
    assert [b.to_dict()["type"] for b in h.model.calls[0][0][-1].content] == ["text", "image"]


async def test_a_second_turn_while_one_runs_is_a_conflict_and_writes_nothing() -> None:
    h = Harness(ScriptedModel([HELLO, HELLO]))
    first = await h.start(ChatRequest(OWNER, "first"))
    with pytest.raises(Conflict):
        await h.start(ChatRequest(OWNER, "second", ConversationId(first.conversation_id)))
    assert len(h.store.messages) == 1
    await h.spawner.run_all()
    await h.turn("third", first.conversation_id)
    assert len(h.store.messages) == 2


async def test_an_event_log_that_fails_mid_turn_ends_it_with_error_and_the_end_is_sent_once_it_is_back() -> None:
    model = ScriptedModel([HELLO])
    model.on_chunk = pause
    h = Harness(model)
    h.log.failures = 1  # the first append (the recall event) fails; the log is back for the next
    handle = await h.turn("hi")
    stored = h.store.messages[handle.message_id]
    assert stored.status is MessageStatus.ERROR
    assert (await h.events(handle))[-1] == "error"
