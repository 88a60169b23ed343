"""Agent loop rules: the mode follows the model's abilities; the config keeps sane sizes."""

from __future__ import annotations

import pytest

from domain.agents.config import AgentConfig, AgentMode, ModelCapabilities, choose_mode
from domain.errors import DomainError
from domain.ids import AppId


@pytest.mark.parametrize("tool_call", [False, True])
@pytest.mark.parametrize("agent_thought", [False, True])
def test_without_tools_every_model_just_chats(tool_call: bool, agent_thought: bool) -> None:
    caps = ModelCapabilities(tool_call=tool_call, agent_thought=agent_thought)
    assert choose_mode(caps, has_tools=False) is AgentMode.CHAT


@pytest.mark.parametrize("agent_thought", [False, True])
def test_a_model_that_can_call_tools_uses_native_function_calling(agent_thought: bool) -> None:
    caps = ModelCapabilities(tool_call=True, agent_thought=agent_thought)
    assert choose_mode(caps, has_tools=True) is AgentMode.FUNCTION_CALLING


def test_a_model_that_can_only_reason_uses_react() -> None:
    caps = ModelCapabilities(tool_call=False, agent_thought=True)
    assert choose_mode(caps, has_tools=True) is AgentMode.REACT


def test_a_model_that_can_neither_call_tools_nor_reason_just_chats() -> None:
    assert choose_mode(ModelCapabilities(), has_tools=True) is AgentMode.CHAT


def test_image_input_does_not_change_the_mode() -> None:
    caps = ModelCapabilities(image_input=True)
    assert choose_mode(caps, has_tools=True) is AgentMode.CHAT


def test_agent_config_defaults_match_the_design() -> None:
    config = AgentConfig(AppId("app-1"))
    assert config.max_tool_rounds == 5
    assert config.dialog_round >= 0
    assert config.history_max_tokens >= 0
    assert config.preset_prompt
    assert config.tool_names == ()


@pytest.mark.parametrize("field", ["dialog_round", "history_max_tokens", "max_tool_rounds"])
def test_agent_config_rejects_negative_sizes(field: str) -> None:
    with pytest.raises(DomainError, match="negative"):
        AgentConfig(AppId("app-1"), **{field: -1})  # type: ignore[arg-type]


def test_agent_config_accepts_zero_sizes() -> None:
    config = AgentConfig(AppId("app-1"), dialog_round=0, history_max_tokens=0, max_tool_rounds=0)
    assert (config.dialog_round, config.history_max_tokens, config.max_tool_rounds) == (0, 0, 0)
