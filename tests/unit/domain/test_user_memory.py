"""User memory's rules: the API-source rule, whose facts a turn reads, a conversation's value
winning in the prompt, fact types, the recall budget with other conversations' items."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from domain.accounts.viewers import check_end_user
from domain.agents.config import AgentConfig
from domain.agents.config_codec import InvalidConfig, config_from_dict, config_to_dict
from domain.agents.prompt import EARLIER_HEADER, ENTITIES_HEADER, PromptMemory, system_text
from domain.errors import DomainError
from domain.ids import AppId, ConversationId, EndUserId, MessageId, OwnerId
from domain.memory.entities import Entity, EntityScope, EntitySource, merge_entities, merge_entity
from domain.memory.recall import select_recall
from domain.memory.user_facts import (
    FactHolder,
    ForgetCounts,
    RecallItem,
    RecallKind,
    ScoredItem,
    UserScope,
    check_fact_type,
    facts_for_prompt,
)

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def fact(value: str, at: int = 0, *, source: EntitySource = EntitySource.EXTRACTED, explicit: bool = True,
         confidence: float = 0.9, kind: str = "city") -> Entity:
    return Entity(kind, value, confidence, MessageId(f"m{at}"), T0 + timedelta(minutes=at),
                  scope=EntityScope.USER, source=source, explicit=explicit)


def test_an_api_value_is_not_replaced_by_an_inferred_extraction() -> None:
    set_by_hand = fact("Porto", 0, source=EntitySource.API, confidence=1.0)
    inferred = fact("Lisbon", 5, explicit=False)
    change = merge_entity(set_by_hand, inferred)
    assert change.current == set_by_hand
    assert change.retired is not None
    assert (change.retired.value, change.retired.superseded_at) == ("Lisbon", inferred.updated_at)


def test_an_api_value_gives_way_to_a_later_explicit_statement() -> None:
    set_by_hand = fact("Porto", 0, source=EntitySource.API, confidence=1.0)
    said = fact("Lisbon", 5, explicit=True)
    change = merge_entity(set_by_hand, said)
    assert change.current == said
    assert change.retired == set_by_hand.superseded(said.updated_at)


def test_an_api_value_gives_way_to_the_api_again() -> None:
    first = fact("Porto", 0, source=EntitySource.API, confidence=1.0)
    again = fact("Braga", 1, source=EntitySource.API, explicit=False, confidence=1.0)
    assert merge_entity(first, again).current == again


def test_an_inferred_echo_of_an_api_value_keeps_it_as_set() -> None:
    set_by_hand = fact("Porto", 0, source=EntitySource.API, confidence=1.0)
    echo = fact("porto", 5, explicit=False, confidence=0.8)
    change = merge_entity(set_by_hand, echo)
    assert (change.current, change.retired) == (set_by_hand, None)


def test_an_explicit_statement_older_than_the_api_value_goes_to_history() -> None:
    set_by_hand = fact("Porto", 5, source=EntitySource.API, confidence=1.0)
    late = fact("Lisbon", 1)
    merged, retired = merge_entities({"city": set_by_hand}, [late])
    assert merged["city"] == set_by_hand
    assert [r.value for r in retired] == ["Lisbon"]


def test_an_extracted_value_replaces_an_extracted_one_inferred_or_not() -> None:
    merged, retired = merge_entities({"city": fact("Porto", 0)}, [fact("Lisbon", 5, explicit=False)])
    assert merged["city"].value == "Lisbon"
    assert [r.value for r in retired] == ["Porto"]


def test_a_conversations_value_of_a_type_wins_over_the_users_fact() -> None:
    conversation = (fact("Berlin", 9, kind="city"),)
    user = (fact("Lisbon", 1, kind="city"), fact("Ada", 1, kind="name"))
    assert [(e.type, e.value) for e in facts_for_prompt(conversation, user)] == [("city", "Berlin"), ("name", "Ada")]


def test_whose_facts_an_agent_reads_follows_its_config() -> None:
    owner, ann, agent = OwnerId("acme"), EndUserId("ann"), AppId("support")
    assert AgentConfig(agent).holder_for(owner, ann, agent) == FactHolder(owner, ann, None)
    own = AgentConfig(agent, user_scope=UserScope.AGENT)
    assert own.holder_for(owner, ann, agent) == FactHolder(owner, ann, agent)
    assert AgentConfig(agent, user_memory=False).holder_for(owner, ann, agent) is None


@pytest.mark.parametrize("kind", ["city", "dog_name", "a", "x" * 64, "diet_2"])
def test_a_fact_type_is_lower_case_letters_digits_and_underscores(kind: str) -> None:
    assert check_fact_type(kind) == kind


@pytest.mark.parametrize("kind", ["", "City", "favourite colour", "x" * 65, "café", "a-b"])
def test_any_other_fact_type_is_refused(kind: str) -> None:
    with pytest.raises(DomainError):
        check_fact_type(kind)


def earlier(text: str, score: float, conversation: str = "c-old") -> ScoredItem:
    item = RecallItem(f"arc_{text[:4]}", RecallKind.ARCHIVE, ConversationId(conversation), text, (MessageId("m1"),))
    return ScoredItem(item, score)


def test_other_conversations_come_last_in_the_budget_and_are_named_when_left_out() -> None:
    def words(text: str) -> int:
        return len(text.split())

    kept = earlier("teal is her colour", 0.9)
    dropped = earlier("a long story about a trip to the mountains in winter", 0.5)
    selection = select_recall([fact("Lisbon")], "short summary", [], 13, words, [kept, dropped])
    assert selection.earlier == (kept,)
    assert selection.dropped == (f"archive {dropped.item.id} of conversation c-old",)


def test_the_prompt_cites_earlier_conversations_before_the_current_facts() -> None:
    memory = PromptMemory(entities=(fact("Lisbon"),), earlier=("(conversation c-1) she likes teal",))
    text = system_text(AgentConfig(AppId("a")), memory)
    assert text.index(EARLIER_HEADER) < text.index(ENTITIES_HEADER)
    assert "- (conversation c-1) she likes teal" in text


def test_user_memory_settings_round_trip_in_an_agents_config() -> None:
    config = config_from_dict(AppId("a"), {"memory": {"user_memory": False, "user_scope": "agent"}})
    assert (config.user_memory, config.user_scope) == (False, UserScope.AGENT)
    assert config_to_dict(config)["memory"]["user_scope"] == "agent"
    assert config_from_dict(AppId("a"), config_to_dict(config)) == config


def test_wrong_user_memory_settings_are_named() -> None:
    with pytest.raises(InvalidConfig) as refused:
        config_from_dict(AppId("a"), {"memory": {"user_memory": "yes", "user_scope": "team"}})
    assert refused.value.problems == ["memory.user_memory: must be true or false",
                                      "memory.user_scope: must be 'account' or 'agent'"]


def test_forget_counts_are_never_negative() -> None:
    assert ForgetCounts().facts == 0
    with pytest.raises(DomainError):
        ForgetCounts(facts=-1)


def test_no_end_user_may_be_called_me_which_names_the_callers_own() -> None:
    with pytest.raises(DomainError, match="reserved"):
        check_end_user("me")
    assert check_end_user("me2") == "me2"
