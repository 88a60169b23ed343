"""Model profiles from settings: the specs, their keys, capabilities and prices, and the registry
that builds their models."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from application.errors import ModelError
from domain.agents.config import ModelCapabilities
from infrastructure.models import scripted_model
from infrastructure.models.agentscope_chat_model import AgentScopeChatModel
from infrastructure.models.chat_model_registry import ChatModelRegistry
from infrastructure.models.model_profiles import default_spec, profile_specs, read_key
from infrastructure.models.openai_chat_model import OpenAIChatModel
from infrastructure.models.provider_config import TokenPrice
from infrastructure.models.scripted_model import ScriptedChatModel
from interfaces.settings.llm import LLMSettings
from tests.fakes import WordTokenizer

KEY = "sk-profile-0123456789abcdef"
DEFAULT_KEY = "sk-default-0123456789abcdef"
PRICES = {"gpt-4o": {"input": 2.5, "output": 10.0}, "gpt-4o-mini": {"input": 0.15, "output": 0.6}}


def llm(**overrides: Any) -> dict[str, Any]:
    """The plain `llm` settings the container holds (the key unwrapped)."""
    return LLMSettings(**overrides).model_dump() | {"api_key": overrides.get("api_key")}


def entry(name: str = "fast", **fields: Any) -> dict[str, Any]:
    """A MEMAGENT_MODELS entry as the settings dump it (unset fields are None)."""
    base: dict[str, Any] = {
        "name": name, "provider": "openai", "base_url": None, "model": "gpt-4o-mini", "api_key_env": None,
        "api_key_file": None, "capabilities": {}, "price": None, "temperature": None, "timeout": None,
        "max_retries": None, "agentscope_class": "OpenAIChatModel", "agentscope_kwargs": {},
    }
    return base | fields


def test_default_comes_first_then_the_profiles_in_their_order() -> None:
    specs = profile_specs(llm(provider="openai"), [entry("fast"), entry("big", model="gpt-4o")])
    assert [s.name for s in specs] == ["default", "fast", "big"]
    assert [s.config.model for s in specs] == ["gpt-4o-mini", "gpt-4o-mini", "gpt-4o"]


def test_what_a_profile_leaves_out_comes_from_the_llm_settings_but_never_its_url_or_key() -> None:
    settings = llm(provider="openai", base_url="http://main.test/v1", api_key=DEFAULT_KEY, temperature=0.3,
                   timeout=12, max_retries=4)
    [_, fast] = profile_specs(settings, [entry()])
    config = fast.config
    assert (config.temperature, config.timeout, config.max_retries) == (0.3, 12.0, 4)
    assert (config.base_url, config.api_key) == (None, None)


def test_what_a_profile_sets_wins_over_the_llm_settings() -> None:
    given = entry(base_url="http://fast.test/v1", temperature=1.1, timeout=3, max_retries=0)
    [_, fast] = profile_specs(llm(temperature=0.3), [given])
    config = fast.config
    assert (config.base_url, config.temperature, config.timeout, config.max_retries) == (
        "http://fast.test/v1", 1.1, 3.0, 0,
    )


def test_a_key_comes_from_the_environment_variable_the_profile_names() -> None:
    [_, fast] = profile_specs(llm(), [entry(api_key_env="FAST_KEY")], environ={"FAST_KEY": f" {KEY}\n"})
    assert fast.config.api_key == KEY


def test_a_missing_environment_variable_names_the_setting_the_profile_and_the_variable() -> None:
    with pytest.raises(ModelError) as raised:
        profile_specs(llm(), [entry(api_key_env="FAST_KEY")], environ={})
    assert raised.value.message == (
        "MEMAGENT_MODELS: profile 'fast': the environment variable FAST_KEY (api_key_env) is not set or empty"
    )


def test_a_key_file_is_read_and_stripped_of_whitespace(tmp_path: Path) -> None:
    secret = tmp_path / "fast.key"
    secret.write_text(f"\n  {KEY}  \n", encoding="utf-8")
    [_, fast] = profile_specs(llm(), [entry(api_key_file=str(secret))])
    assert fast.config.api_key == KEY


@pytest.mark.parametrize("content", [None, "  \n"])
def test_an_unreadable_or_empty_key_file_is_refused_naming_the_file(tmp_path: Path, content: str | None) -> None:
    secret = tmp_path / "fast.key"
    if content is not None:
        secret.write_text(content, encoding="utf-8")
    with pytest.raises(ModelError, match=r"^the api_key_file .*fast\.key (cannot be read|is empty)"):
        read_key(None, str(secret))


def test_a_profile_may_not_name_both_a_variable_and_a_file(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="not both"):
        read_key("FAST_KEY", str(tmp_path / "fast.key"), environ={"FAST_KEY": KEY})


def test_a_profile_without_a_key_source_has_no_key() -> None:
    assert read_key(None, None) is None


@pytest.mark.parametrize(
    ("names", "why"),
    [
        (["fast", "fast"], "profile name 'fast' is used twice"),
        (["default"], "the name 'default' is the MEMAGENT_LLM__* model's"),
        (["a b"], "profile name 'a b' must be 1-64 letters"),
        (["x" * 65], "must be 1-64 letters"),
    ],
)
def test_a_duplicate_reserved_or_malformed_name_is_refused(names: list[str], why: str) -> None:
    with pytest.raises(ModelError) as raised:
        profile_specs(llm(), [entry(name) for name in names])
    assert raised.value.message.startswith("MEMAGENT_MODELS: ")
    assert why in raised.value.message


def test_the_key_is_in_no_repr_or_str(tmp_path: Path) -> None:
    specs = profile_specs(
        llm(provider="openai", api_key=DEFAULT_KEY),
        [entry(api_key_env="FAST_KEY"), entry("as", provider="agentscope", api_key_env="FAST_KEY",
                                            agentscope_kwargs={"credential": {"api_key": KEY}})],
        environ={"FAST_KEY": KEY},
    )
    registry = ChatModelRegistry(OpenAIChatModel(specs[0].config), specs, WordTokenizer())
    models = [registry.get(s.name) for s in specs]
    shown = [repr(x) + str(x) for x in [*specs, *(s.config for s in specs), *(s.profile for s in specs), registry,
                                         *models]]
    assert not [text for text in shown if KEY in text or DEFAULT_KEY in text]


def test_capabilities_come_from_the_model_name_with_the_profile_overrides_applied() -> None:
    given = entry(model="gpt-4o", capabilities={"tool_call": None, "agent_thought": None, "image_input": False})
    [_, fast] = profile_specs(llm(), [given])
    assert fast.profile.capabilities == ModelCapabilities(
        tool_call=True, agent_thought=True, image_input=False, structured_output=True
    )


def test_a_profile_price_wins_over_the_price_table() -> None:
    [_, fast] = profile_specs(llm(prices=PRICES), [entry(price={"input": 1.0, "output": 2.0})])
    assert (fast.config.price, fast.priced) == (TokenPrice(1.0, 2.0), True)
    assert (fast.profile.input_price, fast.profile.output_price, fast.profile.priced) == (1.0, 2.0, True)


def test_a_profile_without_a_price_takes_the_price_tables_entry_for_its_model() -> None:
    [_, fast] = profile_specs(llm(prices=PRICES), [entry(model="gpt-4o-2024-08-06")])
    assert (fast.config.price, fast.priced) == (TokenPrice(2.5, 10.0), True)


def test_a_model_with_no_price_anywhere_is_unpriced_and_free() -> None:
    [default, fast] = profile_specs(llm(provider="openai", model="llama3", prices=PRICES), [entry(model="llama3")])
    for spec in (default, fast):
        assert (spec.profile.input_price, spec.profile.output_price, spec.profile.priced) == (0.0, 0.0, False)


def test_the_default_profile_keeps_the_llm_price_table() -> None:
    spec = default_spec(llm(provider="openai", model="gpt-4o-mini", prices=PRICES))
    assert (spec.config.price, spec.priced) == (TokenPrice(0.15, 0.6), True)


def test_a_scripted_profile_is_the_scripted_model_whatever_model_it_names() -> None:
    [default, offline] = profile_specs(llm(provider="scripted"), [entry("offline", provider="scripted", model="x")])
    for spec in (default, offline):
        assert (spec.profile.model, spec.profile.capabilities, spec.priced) == (
            scripted_model.NAME, scripted_model.CAPABILITIES, True,
        )


def registry_of(*profiles: dict[str, Any]) -> tuple[ChatModelRegistry, ScriptedChatModel]:
    default = ScriptedChatModel(WordTokenizer())
    specs = profile_specs(llm(provider="scripted"), list(profiles), environ={"FAST_KEY": KEY})
    return ChatModelRegistry(default, specs, WordTokenizer()), default


def test_the_default_profile_is_the_containers_own_model() -> None:
    registry, default = registry_of(entry())
    assert registry.get("default") is default


def test_each_profile_gets_its_providers_adapter_built_once() -> None:
    registry, _ = registry_of(entry("fast"), entry("as", provider="agentscope"), entry("offline", provider="scripted"))
    built = {name: registry.get(name) for name in ("fast", "as", "offline")}
    assert isinstance(built["fast"], OpenAIChatModel)
    assert isinstance(built["as"], AgentScopeChatModel)
    assert isinstance(built["offline"], ScriptedChatModel)
    assert all(registry.get(name) is model for name, model in built.items())


def test_an_unknown_profile_is_none() -> None:
    registry, _ = registry_of(entry())
    assert registry.get("nope") is None


def test_profiles_list_default_first_without_building_a_model() -> None:
    registry, _ = registry_of(entry("fast"), entry("big", model="gpt-4o"))
    assert [(p.name, p.provider, p.model) for p in registry.profiles()] == [
        ("default", "scripted", scripted_model.NAME), ("fast", "openai", "gpt-4o-mini"), ("big", "openai", "gpt-4o"),
    ]
    assert registry._built == []


def test_a_registry_needs_default_first() -> None:
    [_, fast] = profile_specs(llm(), [entry()])
    with pytest.raises(ValueError, match="'default'"):
        ChatModelRegistry(ScriptedChatModel(WordTokenizer()), [fast], WordTokenizer())


async def test_closing_the_registry_closes_what_it_built_not_the_default() -> None:
    specs = profile_specs(llm(provider="openai"), [entry("fast")])
    default = OpenAIChatModel(specs[0].config)
    registry = ChatModelRegistry(default, specs, WordTokenizer())
    fast = registry.get("fast")
    assert isinstance(fast, OpenAIChatModel)
    sessions = [model._http._open() for model in (default, fast)]  # as their first calls would
    await registry.aclose()
    assert [session.closed for session in sessions] == [False, True]
    assert registry.get("default") is default
    assert registry.get("fast") is not fast  # built again after a close
    await registry.aclose()
    await default.aclose()
