import pytest

from domain.agents.config import ModelCapabilities
from domain.conversations.messages import Usage
from infrastructure.models.provider_config import FREE, TokenPrice, price_for, provider_config

PRICES = {"gpt-4o": {"input": 2.5, "output": 10.0}, "gpt-4o-mini": {"input": 0.15, "output": 0.6}}


def test_a_model_is_priced_by_its_own_entry_or_the_longest_prefix() -> None:
    assert price_for("gpt-4o", PRICES) == TokenPrice(2.5, 10.0)
    assert price_for("gpt-4o-mini-2024-07-18", PRICES) == TokenPrice(0.15, 0.6)
    assert price_for("llama3", PRICES) is FREE


def test_usage_is_priced_per_million_tokens() -> None:
    usage = TokenPrice(0.15, 0.6).usage(2_000_000, 500_000)
    assert (usage.prompt_tokens, usage.completion_tokens) == (2_000_000, 500_000)
    assert usage.price == pytest.approx(0.6)
    assert FREE.usage(10, 5) == Usage(10, 5, 0.0)


def test_the_config_comes_from_plain_llm_settings() -> None:
    config = provider_config(
        {
            "model": "gpt-4o-mini",
            "base_url": "http://llm.test/v1",
            "api_key": "sk-secret",
            "temperature": 0.1,
            "timeout": 9,
            "max_retries": 3,
            "retry_initial_delay": 0.2,
            "retry_max_delay": 4,
            "capabilities": {"tool_call": False, "agent_thought": None, "image_input": None},
            "prices": PRICES,
            "provider": "openai",
        }
    )
    assert config.capabilities == ModelCapabilities(
        tool_call=False, agent_thought=True, image_input=True, structured_output=True
    )
    assert config.price == TokenPrice(0.15, 0.6)
    assert (config.timeout, config.max_retries, config.retry_max_delay) == (9.0, 3, 4.0)
    assert "sk-secret" not in repr(config)
