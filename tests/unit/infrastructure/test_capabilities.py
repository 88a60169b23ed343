import pytest

from domain.agents.config import ModelCapabilities
from infrastructure.models.capabilities import capabilities_for, default_capabilities

ALL = ModelCapabilities(True, True, True)
OPENAI = ModelCapabilities(True, True, True, structured_output=True)
TOOLS = ModelCapabilities(True, True, False)
REASONING = ModelCapabilities(False, True, False)


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("gpt-4o-mini", OPENAI),
        ("gpt-4o-2024-08-06", OPENAI),
        ("gpt-4.1-nano", OPENAI),
        ("gpt-4-turbo", ALL),
        ("gpt-3.5-turbo", TOOLS),
        ("o1-mini", REASONING),
        ("o3-mini", TOOLS),
        ("o4-mini", OPENAI),
        ("deepseek-chat", TOOLS),
        ("deepseek-reasoner", REASONING),
        ("qwen-max", TOOLS),
        ("Qwen/Qwen2.5-VL-7B-Instruct", ALL),
        ("llama3", REASONING),
        ("llama3.1:8b", TOOLS),
        ("meta-llama/Llama-3.2-11B-Vision-Instruct", ALL),
        ("some-private-model", REASONING),
    ],
)
def test_well_known_models_have_default_capabilities(model: str, expected: ModelCapabilities) -> None:
    assert default_capabilities(model) == expected


def test_overrides_that_are_set_replace_the_defaults_and_the_rest_stay() -> None:
    caps = capabilities_for("gpt-4o-mini", {"tool_call": False, "agent_thought": None, "image_input": False})
    assert caps == ModelCapabilities(tool_call=False, agent_thought=True, image_input=False, structured_output=True)


def test_no_overrides_means_the_table() -> None:
    assert capabilities_for("deepseek-reasoner", {}) == REASONING
