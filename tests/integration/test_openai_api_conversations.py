"""The server owns the conversation a /v1 completion belongs to, over real HTTP with the `openai` SDK,
on SQLite + in-process memory and on PostgreSQL + Redis (keys required on both): a stock client
that resends its whole history each turn keeps one conversation, whose memory (summary, entities,
the user's facts) reaches the prompt; two tabs with different histories are two conversations; an
edited history, or the same one from another end user, is a new one; the header
`X-Memagent-Conversation-Id` or `metadata.conversation_id` names one outright.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import openai
import pytest

from domain.agents.prompt import SUMMARY_HEADER
from tests.integration.backends import history_texts, prompt_of
from tests.integration.http_answers import ok
from tests.integration.openai_world import BACKENDS, World, system_prompt, world_of
from tests.integration.user_memory_world import conversation_memory, eventually, facts, new_user, user_memory
from tests.llm_server import ScriptedLLMServer

pytestmark = pytest.mark.integration

STOCK_SYSTEM = {"role": "system", "content": "You are a helpful assistant."}
SCRIPT = ["Hi, my name is Ada and I live in Lisbon.", "Book a table for tomorrow.", "What should I wear?"]


@pytest.fixture(scope="module", params=BACKENDS)
def world(request: pytest.FixtureRequest, shared_server: ScriptedLLMServer,
          tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with world_of(request.param, tmp_path_factory.mktemp("openai-conversations"), shared_server) as running:
        yield running


@pytest.fixture
def http(world: World) -> Iterator[httpx.Client]:
    with world.http() as client:
        yield client


@dataclass(frozen=True)
class Said:
    conversation: str
    message_id: str
    answer: str


def ask(world: World, messages: list[dict[str, Any]], user: str, **options: Any) -> Said:
    raw = world.sdk().chat.completions.with_raw_response.create(model="memagent", messages=messages, user=user,
                                                                **options)
    completion = raw.parse()
    content = completion.choices[0].message.content
    assert content
    assert completion.id == raw.headers["x-memagent-message-id"]
    return Said(raw.headers["x-memagent-conversation-id"], completion.id, content)


def user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


def assistant(text: str) -> dict[str, str]:
    return {"role": "assistant", "content": text}


def conversations_of(http: httpx.Client, end_user: str) -> list[str]:
    return [c["id"] for c in ok(http.get("/api/conversations", params={"user": end_user}))["data"]]


def queries_of(http: httpx.Client, conversation: str) -> list[tuple[str, str]]:
    listed = ok(http.get(f"/api/conversations/{conversation}/messages", params={"limit": 100}))["data"]
    return [(m["query"], m["status"]) for m in listed]


def test_a_stock_client_resending_its_history_keeps_one_conversation_whose_memory_reaches_the_prompt(
    world: World, http: httpx.Client
) -> None:
    ann = new_user("ann")
    history: list[dict[str, Any]] = [STOCK_SYSTEM]
    turns: list[Said] = []
    for query in SCRIPT:
        history.append(user(query))
        turns.append(said := ask(world, history, ann))
        history.append(assistant(said.answer))
        if len(turns) == 1:  # the user's thinking time: this turn's upkeep has run
            eventually(lambda: {"name", "city"} <= set(facts(user_memory(http, ann))), f"the facts of {ann}")
        elif len(turns) == 2:
            eventually(lambda: _has_date_and_summary(http, said.conversation), "the date and the summary")
    [conversation] = {t.conversation for t in turns}
    assert conversations_of(http, ann) == [conversation]
    assert queries_of(http, conversation) == [(q, "normal") for q in SCRIPT]  # each turn's own query, once
    system = system_prompt(http, turns[-1].message_id)
    assert "- name: Ada" in system  # the user's facts
    assert "- city: Lisbon" in system
    assert "- date: tomorrow (" in system  # the conversation's entity
    assert SUMMARY_HEADER in system
    assert "You are a helpful assistant." in system  # the client's system message, each time
    # The earlier turns come from the server's own record: the client's copy is only matched.
    assert history_texts(prompt_of(http, turns[-1].message_id)) == [
        SCRIPT[0], turns[0].answer, SCRIPT[1], turns[1].answer]

def _has_date_and_summary(http: httpx.Client, conversation: str) -> bool:
    memory = conversation_memory(http, conversation)
    return bool(memory["summary"]) and any(e["type"] == "date" for e in memory["entities"])


def test_two_tabs_with_different_histories_are_two_conversations(world: World, http: httpx.Client) -> None:
    tabs = new_user("tabs")
    rome, oslo = ask(world, [user("Plan a trip to Rome.")], tabs), ask(world, [user("Plan a trip to Oslo.")], tabs)
    assert rome.conversation != oslo.conversation
    rome_history = [user("Plan a trip to Rome."), assistant(rome.answer)]
    oslo_history = [user("Plan a trip to Oslo."), assistant(oslo.answer)]
    rome_2 = ask(world, [*rome_history, user("Book the flight.")], tabs)
    oslo_2 = ask(world, [*oslo_history, user("Book the flight.")], tabs)
    assert (rome_2.conversation, oslo_2.conversation) == (rome.conversation, oslo.conversation)
    # White space re-wrapped by a client still matches; the pairs must be the stored ones, in order.
    rewrapped = [user(" Plan a  trip\nto Rome. "), assistant(rome.answer + "\n"), user("Book the flight."),
                 assistant(rome_2.answer), user("And a hotel.")]
    assert ask(world, rewrapped, tabs).conversation == rome.conversation
    edited = ask(world, [user("Plan a trip to Rome."), assistant("Something I never said."), user("Book it.")], tabs)
    half = ask(world, [assistant(rome.answer), user("Book it.")], tabs)  # the pair's query left out
    assert len({edited.conversation, half.conversation, rome.conversation, oslo.conversation}) == 4
    assert sorted(conversations_of(http, tabs)) == sorted(
        {rome.conversation, oslo.conversation, edited.conversation, half.conversation})
    # A history no conversation holds starts one that continues it: the client's next turn finds it.
    edited_history = [user("Plan a trip to Rome."), assistant("Something I never said."), user("Book it.")]
    edited_2 = ask(world, [*edited_history, assistant(edited.answer), user("For two.")], tabs)
    assert edited_2.conversation == edited.conversation
    assert [q for q, _ in queries_of(http, edited.conversation)] == ["Book it.", "For two."]
    # The same history from another end user is not theirs to continue.
    other = new_user("other")
    assert ask(world, [*rome_history, user("Book the flight.")], other).conversation != rome.conversation


def test_the_conversation_header_or_metadata_names_the_conversation_outright(world: World, http: httpx.Client) -> None:
    named = new_user("named")
    first = ask(world, [user("My favourite colour is teal.")], named)
    header = {"X-Memagent-Conversation-Id": first.conversation}
    by_header = ask(world, [user("What did I say?")], named, extra_headers=header)
    by_metadata = ask(world, [user("And now?")], named, metadata={"conversation_id": first.conversation})
    other = ask(world, [user("A fresh start.")], named)
    both = ask(world, [user("Which one?")], named, extra_headers=header,  # the header wins
               metadata={"conversation_id": other.conversation})
    assert {by_header.conversation, by_metadata.conversation, both.conversation} == {first.conversation}
    assert queries_of(http, first.conversation) == [
        (q, "normal") for q in ("My favourite colour is teal.", "What did I say?", "And now?", "Which one?")]
    assert "My favourite colour is teal." in str(ok(http.get(f"/api/messages/{by_header.message_id}/thoughts")))
    for unknown in ({"extra_headers": {"X-Memagent-Conversation-Id": "no-such-conversation"}},
                    {"metadata": {"conversation_id": "no-such-conversation"}}):
        with pytest.raises(openai.NotFoundError) as refused:
            ask(world, [user("Hello?")], named, **unknown)
        assert refused.value.code == "not_found"
    with pytest.raises(openai.NotFoundError):  # another account's conversation does not exist for Bob
        world.sdk(world.bob).chat.completions.create(model="memagent", messages=[user("Mine now?")],
                                                     extra_headers=header)
    with pytest.raises(openai.NotFoundError):  # nor for another end user of the account
        ask(world, [user("Mine now?")], new_user("stranger"), extra_headers=header)
