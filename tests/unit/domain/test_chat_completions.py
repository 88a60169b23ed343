"""An OpenAI chat request read as one turn: the trailing user messages, the system addition, the
resent history and its fingerprint; models named by agent name, id or `memagent`, with a version."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from domain.agents.agent import Agent, AgentDraft, AgentStatus
from domain.agents.config import AgentConfig, ModelParams
from domain.agents.model_names import DEFAULT_MODEL, agent_named, model_ids
from domain.conversations.chat_completions import (
    NO_HISTORY,
    CompletionMessage,
    CompletionRole,
    extend_fingerprint,
    fingerprint_of,
    parse_model,
    read_completion,
)
from domain.errors import DomainError
from domain.ids import DEFAULT_AGENT, AppId, OwnerId

S, D, U, A = CompletionRole.SYSTEM, CompletionRole.DEVELOPER, CompletionRole.USER, CompletionRole.ASSISTANT
M = CompletionMessage


def test_the_trailing_user_messages_are_the_turn_joined_in_order() -> None:
    turn = read_completion((M(U, "hi"), M(A, "hello"), M(U, "My name is Ada."),
                            M(U, "<system-reminder>be kind</system-reminder>", ("https://x.test/a.png",))))
    assert turn.query == "My name is Ada.\n\n<system-reminder>be kind</system-reminder>"
    assert turn.image_urls == ("https://x.test/a.png",)
    assert turn.history == (("hi", "hello"),)


def test_system_and_developer_messages_are_one_addition_to_the_prompt() -> None:
    turn = read_completion((M(S, "Be brief."), M(U, "hi"), M(D, "Answer in French.")))
    assert turn.system == "Be brief.\n\nAnswer in French."


def test_user_messages_before_one_answer_are_one_pair() -> None:
    turn = read_completion((M(U, "a"), M(U, "b"), M(A, "c"), M(U, "d"), M(A, "e"), M(U, "f")))
    assert turn.history == (("a\n\nb", "c"), ("d", "e"))


def test_an_image_alone_is_a_turn() -> None:
    turn = read_completion((M(U, "", ("data:image/png;base64,AAAA",)),))
    assert (turn.query, turn.image_urls) == ("(image)", ("data:image/png;base64,AAAA",))


@pytest.mark.parametrize("messages", [(M(U, "hi"), M(A, "hello")), (M(S, "x"),), (M(U, "  "),)])
def test_messages_that_end_without_a_user_turn_are_refused(messages: tuple[CompletionMessage, ...]) -> None:
    with pytest.raises(DomainError, match="without a user message"):
        read_completion(messages)


def test_the_fingerprint_of_a_history_is_the_chain_of_its_pairs_whatever_the_white_space() -> None:
    pairs = (("hi", "hello"), ("my name is Ada", "Nice to meet you, Ada."))
    chained = extend_fingerprint(extend_fingerprint(NO_HISTORY, *pairs[0]), *pairs[1])
    assert fingerprint_of(pairs) == chained
    assert fingerprint_of((("hi ", "hello\n"), (" my  name is Ada", "Nice to meet you, Ada."))) == chained
    assert fingerprint_of(pairs[:1]) != chained
    assert fingerprint_of(()) == NO_HISTORY


@pytest.mark.parametrize(("model", "parsed"), [("ada", ("ada", None)), ("ada@3", ("ada", 3)),
                                               ("team@home@2", ("team@home", 2))])
def test_a_model_names_an_agent_and_may_pin_a_version(model: str, parsed: tuple[str, int | None]) -> None:
    assert parse_model(model) == parsed


@pytest.mark.parametrize("model", ["ada@", "ada@0", "ada@x", "@2"])
def test_a_version_that_is_not_a_positive_number_is_refused(model: str) -> None:
    with pytest.raises(DomainError):
        parse_model(model)


def agent(agent_id: str, name: str, status: AgentStatus = AgentStatus.ACTIVE) -> Agent:
    at = datetime(2026, 12, 1, tzinfo=UTC)
    return Agent(AppId(agent_id), OwnerId("o"), name, "", status, AgentDraft(AgentConfig(AppId(agent_id)), 1, at), 1,
                 None, at, at)


def test_agents_are_models_by_unique_name_else_by_id_and_the_default_is_memagent() -> None:
    agents = [agent(DEFAULT_AGENT, "Default"), agent("a1", "Ada"), agent("a2", "Twin"), agent("a3", "Twin"),
              agent("a4", "memagent"), agent("a5", "Gone", AgentStatus.ARCHIVED)]
    assert [name for name, _ in model_ids(agents)] == [DEFAULT_MODEL, "Ada", "a2", "a3", "a4"]
    assert agent_named(agents, "Ada") == "a1"
    assert agent_named(agents, "a1") == "a1"
    assert agent_named(agents, "Twin") is None
    assert agent_named(agents, "memagent") == DEFAULT_AGENT
    assert agent_named(agents, "Gone") is None


def test_a_requests_sampling_settings_and_system_text_change_that_call_only() -> None:
    config = AgentConfig(AppId("a"), preset_prompt="You are Ada.", model_params=ModelParams(0.7, 500, None))
    call = config.for_call(ModelParams(temperature=0.1, top_p=0.5), "Be brief.")
    assert call.model_params == ModelParams(0.1, 500, 0.5)
    assert call.preset_prompt == "You are Ada.\n\nBe brief."
    assert config.for_call(None, "  ") == config


def test_an_image_only_message_in_the_history_pairs_as_the_stored_turn_does() -> None:
    image = M(U, "", ("https://x.test/a.png",))
    turn = read_completion((image, M(A, "A cat."), M(U, "And now?")))
    assert turn.history == (("(image)", "A cat."),)


def test_a_message_that_cannot_be_stored_is_refused_naming_it() -> None:
    with pytest.raises(DomainError, match=r"messages\[1\]"):
        read_completion((M(U, "hi"), M(A, "half \ud800 a pair"), M(U, "next")))


def test_a_fingerprint_can_continue_a_history_brought_from_elsewhere() -> None:
    brought = fingerprint_of((("hi", "hello"),))
    assert fingerprint_of((("and?", "so"),), brought) == fingerprint_of((("hi", "hello"), ("and?", "so")))
