"""Agents as data: the draft's revision, immutable versions, the active version, archiving."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from domain.agents.agent import Agent, AgentConflict, AgentDraft, AgentStatus
from domain.agents.config import AgentConfig
from domain.agents.config_codec import InvalidConfig, config_diff, config_from_dict, config_to_dict
from domain.errors import DomainError
from domain.ids import AppId, OwnerId

T0 = datetime(2026, 5, 1, tzinfo=UTC)
A = AppId("a1")


def agent(config: AgentConfig | None = None) -> Agent:
    draft = AgentDraft(1, config or AgentConfig(A), T0)
    return Agent(A, OwnerId("alice"), "Ada", "", AgentStatus.ACTIVE, draft, 0, None, T0, T0)


def prompted(text: str) -> AgentConfig:
    return AgentConfig(A, preset_prompt=text)


def test_a_draft_saved_over_its_revision_moves_on_and_a_stale_one_is_a_conflict() -> None:
    first = agent().with_draft(prompted("one"), 1, T0)
    assert (first.draft.revision, first.draft.config.preset_prompt) == (2, "one")
    with pytest.raises(AgentConflict, match="revision 2, not 1"):
        first.with_draft(prompted("two"), 1, T0)


def test_versions_count_up_are_active_and_an_unchanged_draft_has_nothing_to_publish() -> None:
    published, v1 = agent(prompted("one")).published("first", None, T0)
    assert (v1.version, v1.note, published.active_version) == (1, "first", 1)
    with pytest.raises(AgentConflict, match="Nothing changed"):
        published.published("again", v1, T0)
    changed = published.with_draft(prompted("two"), 1, T0)
    after, v2 = changed.published("", v1, T0 + timedelta(seconds=1))
    assert (v2.version, after.active_version, v1.config.preset_prompt) == (2, 2, "one")


def test_activating_an_older_version_pins_it_until_the_next_publish() -> None:
    one, v1 = agent(prompted("one")).published("", None, T0)
    two, v2 = one.with_draft(prompted("two"), 1, T0).published("", v1, T0)
    pinned = two.activated(1, T0)
    assert pinned.active_version == 1
    assert pinned.activated(2, T0).active_version == 2
    three, _ = pinned.with_draft(prompted("three"), 2, T0).published("", v2, T0)
    assert three.active_version == 3  # publishing releases the pin
    with pytest.raises(DomainError, match="never published"):
        two.activated(7, T0)


def test_an_archived_agent_takes_no_change_but_unarchiving() -> None:
    archived = agent().with_status(AgentStatus.ARCHIVED, T0)
    for change in (lambda a: a.with_draft(prompted("x"), 1, T0), lambda a: a.published("", None, T0),
                   lambda a: a.described("New", None, T0)):
        with pytest.raises(AgentConflict, match="archived"):
            change(archived)
    assert archived.with_status(AgentStatus.ACTIVE, T0).described("New", None, T0).name == "New"


def test_a_config_given_in_part_takes_the_defaults_and_round_trips_whole() -> None:
    config = config_from_dict(A, {"memory": {"dialog_round": 3}, "tools": ["calculator"], "language": "zh"})
    assert (config.dialog_round, config.tool_names, config.language) == (3, ("calculator",), "zh")
    assert config.history_max_tokens == AgentConfig(A).history_max_tokens
    assert config_from_dict(A, config_to_dict(config)) == config


def test_a_bad_config_is_refused_with_every_problem_named_by_its_field() -> None:
    with pytest.raises(InvalidConfig) as refused:
        config_from_dict(A, {"colour": "red", "memory": {"dialog_round": -1, "depth": 2},
                             "model_params": {"temperature": 5}, "tools": "calculator"})
    assert refused.value.problems == [
        "colour: unknown field", "memory.depth: unknown field", "tools: must be a list of tool names",
        "memory.dialog_round: must be an integer in 0..200", "model_params.temperature: must be a number in 0..2",
    ]


def test_the_memory_runs_on_the_agent_s_model_unless_memory_model_names_another_profile() -> None:
    own = config_from_dict(A, {"model": "private"})
    assert (own.memory_model, own.upkeep_model, config_to_dict(own)["memory"]["model"]) == (None, "private", None)
    cheap = config_from_dict(A, {"model": "private", "memory": {"model": "cheap"}})
    assert (cheap.model, cheap.upkeep_model) == ("private", "cheap")
    assert config_from_dict(A, config_to_dict(cheap)) == cheap
    assert config_diff(own, cheap) == [("memory.model", None, "cheap")]


@pytest.mark.parametrize("named", [42, "", "x" * 65, ["cheap"]])
def test_a_memory_model_is_null_or_a_profile_name(named: object) -> None:
    with pytest.raises(InvalidConfig) as refused:
        config_from_dict(A, {"memory": {"model": named}})
    assert refused.value.problems == ["memory.model: must be null or a profile name"]


def test_the_diff_of_two_configs_lists_each_field_that_differs_with_both_values() -> None:
    before = AgentConfig(A)
    after = replace(before, preset_prompt="Be brief.", dialog_round=4)
    assert config_diff(before, after) == [
        ("preset_prompt", before.preset_prompt, "Be brief."), ("memory.dialog_round", 10, 4),
    ]


def test_text_no_store_can_hold_is_refused_in_a_config() -> None:
    with pytest.raises(InvalidConfig, match="preset_prompt"):
        config_from_dict(A, {"preset_prompt": "half a pair \ud83d"})
