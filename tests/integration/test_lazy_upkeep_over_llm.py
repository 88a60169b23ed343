"""Lazy memory upkeep with an LLM (issue 21), in process against the OpenAI-protocol test server, which
answers every call from the offline memory models (tests/bench/upkeep_accounting.py): how many upkeep
calls a conversation makes, what one sends, that the window keeps every turn not digested yet, that
inline entities still land per turn, and that digesting twice changes nothing."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from application.chat_turn.aggregate_turn import aggregate
from application.chat_turn.turn import ChatRequest
from domain.conversations.conversation import Message
from domain.ids import ConversationId, MessageId, OwnerId
from infrastructure.memory.llm_memory_digester import DIGEST_TOOL
from interfaces.lifecycle import start_backends, stop_backends
from interfaces.settings.settings import Settings
from interfaces.wiring.build import build_container
from interfaces.wiring.container import Container
from tests.bench.upkeep_accounting import OfflineMemoryModel, purpose_of
from tests.llm_server import RecordedRequest, ScriptedLLMServer

pytestmark = pytest.mark.integration

OWNER = OwnerId("local")
COLOURS = ("teal", "red", "blue", "amber")
QUERIES = [f"My favourite colour is {COLOURS[n // 3 - 1]}." if n % 3 == 0 else f"Tell me about topic {n}."
           for n in range(1, 13)]


async def world(server: ScriptedLLMServer, tmp_path: Path, **memory: Any) -> Container:
    server.reset()
    server.enqueue(*[OfflineMemoryModel()] * 100)
    settings = Settings(
        database={"url": f"sqlite+aiosqlite:///{tmp_path / 'lazy.db'}"},
        agent={"tools": [], "dialog_round": 3, "user_memory": False},  # every value stays the conversation's
        llm={"provider": "openai", "base_url": server.base_url, "api_key": "sk-test", "max_retries": 0},
        memory={"upkeep_every_turns": 6, "upkeep_idle_seconds": 0, **memory}, embeddings={"backend": "lexical"},
    )
    container = build_container(settings)
    await start_backends(container, settings)
    return container


@pytest.fixture
async def lazy(server: ScriptedLLMServer, tmp_path: Path) -> AsyncIterator[Container]:
    container = await world(server, tmp_path)
    yield container
    await stop_backends(container)


async def say(container: Container, query: str, conversation: ConversationId | None) -> Message:
    handle = await container.start_turn()(ChatRequest(OWNER, query, conversation))
    await aggregate(container.follow_task()(handle.task_id))
    await container.memory.upkeep_scheduler().wait_idle()
    message = await container.message_store().get_message(MessageId(handle.message_id), OWNER)
    assert message is not None
    return message


def of(server: ScriptedLLMServer, purpose: str) -> list[RecordedRequest]:
    return [r for r in server.chat_requests if purpose_of(r.body) == purpose]


def history_of(message: Message) -> str:
    """The prompt's messages after the system prompt (the window and the query)."""
    return json.dumps(json.loads(message.prompt)[1:])


async def test_a_conversation_is_digested_once_per_window_in_one_call_of_one_tool_and_never_loses_a_turn(
    server: ScriptedLLMServer, lazy: Container
) -> None:
    conversation: ConversationId | None = None
    waiting: list[str] = []  # queries not digested yet: each must be in the next prompt's window
    for query in QUERIES:
        message = await say(lazy, query, conversation)
        conversation = message.conversation_id
        assert all(q in history_of(message) for q in waiting), "the window kept every turn not digested"
        done = len(of(server, "digest"))
        waiting = [] if done * 3 == QUERIES.index(query) + 1 else [*waiting, query]
    digests = of(server, "digest")
    assert len(digests) == 4, "every 3 turns (dialog_round 3 caps upkeep_every_turns 6), not every turn"
    assert of(server, "summary") == of(server, "entities") == []
    for request in digests:
        [tool] = request.tools
        assert tool["function"]["name"] == DIGEST_TOOL
        assert set(tool["function"]["parameters"]["required"]) == {"summary", "intent", "entities"}
        assert [m["role"] for m in request.messages] == ["system", "user"], "not the conversation's prompt"
    last = digests[-1].messages[1]["content"]
    assert "Current summary:" in last
    assert "Known entities:" in last
    assert "favourite_colour: blue" in last, "the entities known so far"
    assert "[3] User: My favourite colour is amber." in last
    assert "Tell me about topic 8." not in last, "only the new turns"
    assert conversation is not None
    memory = await lazy.memory.conversation_memory().read(conversation, OWNER)
    assert {e.type: e.value for e in memory.entities.current}["favourite_colour"] == "amber"
    assert "amber" in memory.summary


async def test_digesting_the_same_turns_again_calls_no_model_and_changes_nothing(
    server: ScriptedLLMServer, lazy: Container
) -> None:
    turns = [await say(lazy, QUERIES[0], None)]
    for query in QUERIES[1:3]:
        turns.append(await say(lazy, query, turns[0].conversation_id))
    before = await lazy.message_store().get_conversation(turns[0].conversation_id, OWNER)
    calls = len(server.chat_requests)
    await lazy.memory.upkeep().run(lazy.default_agent_config(), turns)
    after = await lazy.message_store().get_conversation(turns[0].conversation_id, OWNER)
    assert len(server.chat_requests) == calls
    assert before is not None
    assert after is not None
    assert after.summary == before.summary != ""


async def test_inline_entities_land_with_each_turn_and_the_digest_asks_for_the_summary_only(
    server: ScriptedLLMServer, tmp_path: Path
) -> None:
    container = await world(server, tmp_path, entity_extraction="inline")
    try:
        conversation: ConversationId | None = None
        for colour in COLOURS[:2]:
            message = await say(container, f"My favourite colour is {colour}.", conversation)
            conversation = message.conversation_id
            sheet = await container.memory.memory_store().entity_sheet(conversation)
            assert {e.type: e.value for e in sheet.current}["favourite_colour"] == colour, "before any digest"
        assert len(of(server, "entities")) == 2
        assert of(server, "digest") == []
        await say(container, "ok", conversation)
        [digest] = of(server, "digest")
        assert digest.tools[0]["function"]["parameters"]["required"] == ["summary"]
    finally:
        await stop_backends(container)
