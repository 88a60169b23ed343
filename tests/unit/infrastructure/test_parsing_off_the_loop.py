"""The model adapters parse long text in a worker thread (application/off_loop.py): the scripted
model's markers in a long message, and a tool call's long arguments from an OpenAI-compatible
server. Each parser is wrapped to note the thread it ran in: a check on where the work ran, not
on how long it took."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any, TypeVar

import pytest

from domain.conversations.messages import Msg, Role, TextBlock
from domain.tools.calls import ToolCall, ToolSpec
from infrastructure.models import scripted_model, tool_calls
from infrastructure.models.scripted_model import ScriptedChatModel
from infrastructure.models.tool_calls import ToolCallAssembler
from infrastructure.models.tool_names import ToolNames
from tests.fakes import T0, WordTokenizer

T = TypeVar("T")
LONG = 1024 * 1024


def noting(parse: Callable[..., T], threads: list[int]) -> Callable[..., T]:
    def noted(*args: Any, **kwargs: Any) -> T:
        threads.append(threading.get_ident())
        return parse(*args, **kwargs)
    return noted


@pytest.mark.parametrize(("chars", "off_loop"), [(LONG, True), (100, False)])
async def test_the_scripted_model_reads_a_long_message_s_marker_off_the_loop(
    monkeypatch: pytest.MonkeyPatch, chars: int, off_loop: bool
) -> None:
    threads: list[int] = []
    monkeypatch.setattr(scripted_model, "tool_request", noting(scripted_model.tool_request, threads))
    text = "x " * (chars // 2) + '[[tool:now {"zone": "UTC"}]]'
    message = Msg("m1", "user", Role.USER, (TextBlock(text),), T0)
    chunks = [c async for c in ScriptedChatModel(WordTokenizer()).stream([message], [ToolSpec("now", "the time")])]
    assert [c.tool_calls for c in chunks if c.tool_calls] == [(ToolCall("call_1", "now", {"zone": "UTC"}),)]
    assert (threads[0] != threading.get_ident()) is off_loop


@pytest.mark.parametrize(("chars", "off_loop"), [(LONG, True), (100, False)])
async def test_long_tool_call_arguments_are_parsed_off_the_loop(
    monkeypatch: pytest.MonkeyPatch, chars: int, off_loop: bool
) -> None:
    threads: list[int] = []
    monkeypatch.setattr(tool_calls, "parse_arguments", noting(tool_calls.parse_arguments, threads))
    arguments = json.dumps({"text": "x" * chars})
    calls = ToolCallAssembler()
    for start in range(0, len(arguments), 4096):  # streamed in pieces, as a server sends them
        calls.add(0, "call_a" if start == 0 else None, "save" if start == 0 else None, arguments[start:start + 4096])
    assert await calls.calls(ToolNames(["save"])) == (ToolCall("call_a", "save", {"text": "x" * chars}),)
    assert (threads[0] != threading.get_ident()) is off_loop
