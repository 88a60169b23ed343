"""The offline scripted model says why each call ended, on its last chunk."""

from __future__ import annotations

from datetime import UTC, datetime

from application.ports.chat_model import ModelChunk
from domain.agents.config import ModelParams
from domain.conversations.messages import Role, text_msg
from domain.tools.calls import ToolSpec
from infrastructure.models.scripted_model import ScriptedChatModel
from tests.fakes import WordTokenizer

AT = datetime(2026, 1, 1, tzinfo=UTC)


async def chunks(query: str, tools: list[ToolSpec], params: ModelParams | None = None) -> list[ModelChunk]:
    messages = [text_msg("s", Role.SYSTEM, "Be brief.", AT), text_msg("u", Role.USER, query, AT)]
    return [chunk async for chunk in ScriptedChatModel(WordTokenizer()).stream(messages, tools, params)]


async def test_an_answer_ends_with_stop_on_its_last_chunk() -> None:
    said = await chunks("tell me a rather long story about the sea", [])
    assert [c.finish_reason for c in said] == [None] * (len(said) - 1) + ["stop"]
    assert said[-1].usage is not None


async def test_an_answer_is_never_cut_at_max_tokens() -> None:
    # The scripted model ignores sampling settings: a tiny max_tokens still gives the whole answer.
    query = "one two three four five"
    whole, capped = await chunks(query, []), await chunks(query, [], ModelParams(max_tokens=1))
    assert capped == whole
    assert capped[-1].finish_reason == "stop"


async def test_a_tool_call_ends_with_tool_calls() -> None:
    said = await chunks("[[tool:now]]", [ToolSpec("now", "The time.")])
    assert [bool(c.tool_calls) for c in said] == [False, True, False]
    assert [c.finish_reason for c in said] == [None, None, "tool_calls"]
