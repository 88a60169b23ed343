"""The built-in price table: the shipped file is well formed, a model is found by its name or the longest
prefix, the settings and a profile override an entry, and a model not listed is unpriced and free."""

from __future__ import annotations

import json
import re
from datetime import date
from importlib import resources
from typing import Any

import pytest

from infrastructure.models.model_profiles import profile_specs
from infrastructure.models.price_table import built_in_prices, read_price_file, with_built_in
from infrastructure.models.provider_config import FREE, TokenPrice, price_for, provider_config
from interfaces.settings.llm import LLMSettings, ModelProfileSettings

PROVIDERS = {"openai", "deepseek", "qwen", "moonshot", "zhipu"}


def shipped() -> dict[str, Any]:
    return dict(json.loads(resources.files("infrastructure.models").joinpath("prices.json").read_text("utf-8")))


def llm(**overrides: Any) -> dict[str, Any]:
    """The plain `llm` settings the container holds."""
    return LLMSettings(**{"provider": "openai"} | overrides).model_dump() | {"api_key": None}


def entry(name: str, model: str, **more: Any) -> dict[str, Any]:
    """A MEMAGENT_MODELS entry as the settings dump it."""
    return ModelProfileSettings(name=name, provider="openai", model=model, **more).model_dump()


def test_every_provider_group_names_its_pricing_page_and_date_and_every_price_is_zero_or_more() -> None:
    groups = shipped()["providers"]
    assert set(groups) >= PROVIDERS
    for provider, group in groups.items():
        assert re.fullmatch(r"https://[^\s/]+\.[a-z]+/\S*", group["source"]), provider
        assert date.fromisoformat(group["date"]) >= date(2025, 1, 1), provider
        assert group["models"], provider
        for model, price in group["models"].items():
            assert set(price) == {"input", "output"}, model
            assert all(isinstance(p, int | float) and p >= 0 for p in price.values()), model


def test_the_table_holds_every_model_of_the_file_once() -> None:
    names = [model for group in shipped()["providers"].values() for model in group["models"]]
    assert len(names) == len(set(names))
    assert sorted(built_in_prices()) == sorted(names)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('{"providers": {"x": {"date": "2025-12-15", "models": {}}}}', "no source or date"),
        ('{"providers": {"x": {"source": "https://x.test/p", "models": {}}}}', "no source or date"),
        ('{"providers": {"x": {"source": "s", "date": "d", "models": {"m": {"input": -1, "output": 1}}}}}',
         "0 or more"),
        ('{"providers": {"x": {"source": "s", "date": "d", "models": {"m": {"input": 1}}}}}', "0 or more"),
        ('{"providers": {"x": {"source": "s", "date": "d", "models": {"m": {"input": 1, "output": 1}}},'
         ' "y": {"source": "s", "date": "d", "models": {"m": {"input": 2, "output": 2}}}}}', "priced twice"),
    ],
)
def test_a_price_file_without_a_source_or_date_a_price_or_with_a_name_twice_is_refused(text: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        read_price_file(text)


def test_a_model_is_priced_by_its_own_built_in_entry() -> None:
    assert price_for("gpt-4o-mini", with_built_in({})) == TokenPrice(0.15, 0.6)
    assert price_for("deepseek-chat", with_built_in({})) == TokenPrice(0.28, 0.42)


def test_a_dated_snapshot_is_priced_by_the_longest_built_in_name_it_starts_with() -> None:
    assert price_for("gpt-4o-mini-2024-07-18", with_built_in({})) == TokenPrice(0.15, 0.6)
    assert price_for("gpt-4o-2024-08-06", with_built_in({})) == TokenPrice(2.5, 10.0)
    assert price_for("gpt-4o-2024-05-13", with_built_in({})) == TokenPrice(5.0, 15.0)  # its own, dearer entry


def test_a_settings_entry_beats_the_built_in_one_of_its_name_and_leaves_longer_names_alone() -> None:
    table = with_built_in({"gpt-4o": {"input": 1.0, "output": 2.0}})
    assert price_for("gpt-4o-2024-08-06", table) == TokenPrice(1.0, 2.0)
    assert price_for("gpt-4o-mini", table) == TokenPrice(0.15, 0.6)
    assert built_in_prices()["gpt-4o"] == {"input": 2.5, "output": 10.0}  # the built-in table is left as it was


def test_the_default_model_takes_its_price_from_the_settings_over_the_built_in_table() -> None:
    assert provider_config(llm(model="qwen-max")).price == TokenPrice(1.6, 6.4)
    overridden = llm(model="qwen-max", prices={"qwen-max": {"input": 0.5, "output": 0.7}})
    assert provider_config(overridden).price == TokenPrice(0.5, 0.7)


def test_a_profile_is_priced_by_its_own_price_then_the_settings_then_the_built_in_table() -> None:
    [default, own, listed, built_in] = profile_specs(
        llm(model="kimi-k2-0905-preview", prices={"glm-4.6": {"input": 0.3, "output": 1.0}}),
        [entry("own", "glm-4.6", price={"input": 0.1, "output": 0.2}), entry("listed", "glm-4.6"),
         entry("built-in", "glm-4.5-air")],
    )
    assert [(s.config.price, s.priced) for s in (default, own, listed, built_in)] == [
        (TokenPrice(0.6, 2.5), True), (TokenPrice(0.1, 0.2), True), (TokenPrice(0.3, 1.0), True),
        (TokenPrice(0.2, 1.1), True),
    ]


def test_a_model_listed_nowhere_costs_nothing_and_is_marked_unpriced() -> None:
    assert price_for("llama3", with_built_in({})) is FREE
    [default, local] = profile_specs(llm(model="my-fine-tune"), [entry("local", "qwen2.5:14b")])
    for spec in (default, local):
        assert (spec.config.price, spec.priced, spec.profile.priced) == (FREE, False, False)


def test_the_scripted_model_is_free_and_priced_whatever_model_it_names() -> None:
    [default, offline] = profile_specs(llm(provider="scripted", model="gpt-4o"),
                                       [entry("offline", "gpt-4o") | {"provider": "scripted"}])
    for spec in (default, offline):
        assert (spec.profile.input_price, spec.profile.output_price, spec.profile.priced) == (0.0, 0.0, True)
