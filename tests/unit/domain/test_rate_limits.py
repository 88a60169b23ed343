"""Rate limits: an agent's own over the defaults, in its config's plain form, and the refusal's words."""

from __future__ import annotations

import pytest

from domain.accounts.rate_limits import LimitName, LimitScope, RateLimits, refusal_message
from domain.agents.config import AgentConfig
from domain.agents.config_codec import InvalidConfig, config_diff, config_from_dict, config_to_dict
from domain.errors import DomainError
from domain.ids import AppId

AGENT = AppId("a1")


def test_limits_set_replace_the_defaults_and_unset_ones_take_them() -> None:
    own = RateLimits(rpm=0, tokens_per_day=500)
    assert own.over(RateLimits(rpm=60, concurrent_turns=2, tokens_per_day=10)) == RateLimits(0, 2, 500)


def test_zero_and_unset_are_unlimited() -> None:
    assert not RateLimits().limited
    assert not RateLimits(0, 0, 0).limited
    assert RateLimits(concurrent_turns=1).limited
    assert RateLimits(rpm=None).of(LimitName.RPM) == 0


def test_a_negative_limit_is_refused() -> None:
    with pytest.raises(DomainError, match="limits.rpm"):
        RateLimits(rpm=-1)


def test_an_agents_limits_travel_in_its_config_and_back() -> None:
    config = config_from_dict(AGENT, {"limits": {"rpm": 30, "tokens_per_day": 100_000.0}})
    assert config.limits == RateLimits(rpm=30, tokens_per_day=100_000)
    plain = config_to_dict(config)
    assert plain["limits"] == {"rpm": 30, "concurrent_turns": None, "tokens_per_day": 100_000}
    assert config_from_dict(AGENT, plain) == config


def test_a_config_without_limits_sets_none() -> None:
    assert config_from_dict(AGENT, {}).limits == RateLimits()
    assert config_to_dict(AgentConfig(AGENT))["limits"] == {"rpm": None, "concurrent_turns": None,
                                                           "tokens_per_day": None}


@pytest.mark.parametrize(
    ("limits", "problem"),
    [
        ({"rpm": -1}, "limits.rpm: must be null or an integer"),
        ({"concurrent_turns": True}, "limits.concurrent_turns: must be null or an integer"),
        ({"tokens_per_day": "lots"}, "limits.tokens_per_day: must be null or an integer"),
        ({"rph": 5}, "limits.rph: unknown field"),
    ],
)
def test_a_wrong_limit_is_named_by_its_path(limits: dict[str, object], problem: str) -> None:
    with pytest.raises(InvalidConfig) as refused:
        config_from_dict(AGENT, {"limits": limits})
    assert any(p.startswith(problem) for p in refused.value.problems), refused.value.problems


def test_a_changed_limit_shows_in_the_diff() -> None:
    before = AgentConfig(AGENT)
    after = config_from_dict(AGENT, {"limits": {"concurrent_turns": 3}})
    assert config_diff(before, after) == [("limits.concurrent_turns", None, 3)]


def test_the_refusal_names_the_limit_and_the_wait() -> None:
    assert refusal_message(LimitName.RPM, LimitScope.KEY, 5, 12) == (
        "This API key has reached its limit of turns per minute (5); retry in 12 s."
    )
    assert "This agent already runs its limit of concurrent turns (2)" in refusal_message(
        LimitName.CONCURRENT_TURNS, LimitScope.AGENT, 2, 1
    )
