"""A model's long output is parsed in a worker thread, beside the event loop; short output in place
(application/off_loop.py). Each parser is wrapped to note the thread it ran in: a check on where
the work ran, not on how long it took."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import pytest

from application.chat_turn import agent_loop, output_check
from application.chat_turn.output_check import OutputCheck
from application.off_loop import OFF_LOOP_CHARS, parsed
from application.ports.chat_model import ModelChunk
from domain.agents.config import AgentConfig, ModelCapabilities
from domain.conversations.structured_output import OutputFormat, OutputKind
from domain.ids import AppId
from infrastructure.tools.jsonschema_check import JsonSchemaCheck
from tests.fakes import ScriptedModel
from tests.unit.application.harness import Harness

T = TypeVar("T")
LONG = 1024 * 1024  # a megabyte of output: tens of milliseconds of parsing


def noting(parse: Callable[..., T], threads: list[int]) -> Callable[..., T]:
    """`parse`, which notes the thread each call ran in."""
    def noted(*args: Any, **kwargs: Any) -> T:
        threads.append(threading.get_ident())
        return parse(*args, **kwargs)
    return noted


async def test_text_past_the_threshold_is_parsed_in_a_worker_thread_and_shorter_text_in_place() -> None:
    threads: list[int] = []
    assert await parsed(noting(str.upper, threads), "a" * (OFF_LOOP_CHARS + 1)) == "A" * (OFF_LOOP_CHARS + 1)
    assert await parsed(noting(str.upper, threads), "a" * OFF_LOOP_CHARS) == "A" * OFF_LOOP_CHARS
    loop_thread = threading.get_ident()
    assert threads[0] != loop_thread
    assert threads[1] == loop_thread


async def now(args: Mapping[str, Any]) -> str:
    return "noon"


@pytest.mark.parametrize(("thought_chars", "off_loop"), [(LONG, True), (100, False)])
async def test_a_react_step_is_parsed_off_the_loop_when_long_and_its_tool_still_runs(
    monkeypatch: pytest.MonkeyPatch, thought_chars: int, off_loop: bool
) -> None:
    threads: list[int] = []
    monkeypatch.setattr(agent_loop, "parse_react_output", noting(agent_loop.parse_react_output, threads))
    thought = "I think. " * (thought_chars // 9)
    step = f'{thought}\n```json\n{{"name": "now", "args": {{}}}}\n```'
    model = ScriptedModel([[ModelChunk(text=step)], [ModelChunk(text="It is noon.")]],
                          ModelCapabilities(tool_call=False, agent_thought=True))
    h = Harness(model, AgentConfig(AppId("default"), tool_names=("now",)), {"now": now})
    handle = await h.turn("what time is it?")
    assert h.store.messages[handle.message_id].answer == "It is noon."
    assert h.store.steps[handle.message_id][1].thought == thought.strip()
    assert (threads[0] != threading.get_ident()) is off_loop


@pytest.mark.parametrize(("chars", "off_loop"), [(LONG, True), (100, False)])
async def test_a_structured_answer_is_parsed_off_the_loop_when_long(
    monkeypatch: pytest.MonkeyPatch, chars: int, off_loop: bool
) -> None:
    threads: list[int] = []
    monkeypatch.setattr(output_check, "parsed_answer", noting(output_check.parsed_answer, threads))
    check = OutputCheck(OutputFormat(OutputKind.JSON_OBJECT), JsonSchemaCheck(), native=False)
    answer = '{"notes": "' + "x" * chars + '"}'
    assert await check.problem(answer) is None
    assert await check.problem("[" + answer + "]") == "it is JSON but not an object"
    assert {t != threading.get_ident() for t in threads} == {off_loop}
