"""The built-in price table (`prices.json`, shipped with the package), and the settings' entries over it.

The file groups the models by provider, each group with the pricing page it was taken from and the
date; a model is looked up by its name alone (`provider_config.listed_price`: the entry, else the
longest name it starts with), so the groups are flattened here and a name may appear only once.
An entry of MEMAGENT_LLM__PRICES replaces the built-in entry of the same name; being one table,
the longest matching name still wins, so a settings entry `gpt-4o` leaves `gpt-4o-mini` at its own price.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping

PriceTable = dict[str, dict[str, float]]  # model name (or prefix) → {"input", "output"}, USD per million tokens


def read_price_file(text: str) -> PriceTable:
    """The models of every provider of a price file, as one table. Raises ValueError for a group
    without its source or date, a price that is missing or negative, or a name listed twice."""
    table: PriceTable = {}
    for provider, group in json.loads(text)["providers"].items():
        if not group.get("source") or not group.get("date"):
            raise ValueError(f"the prices of {provider} name no source or date")
        for model, entry in group["models"].items():
            if model in table:
                raise ValueError(f"{model} is priced twice")
            table[model] = _price(provider, model, entry)
    return table


@cache
def built_in_prices() -> PriceTable:
    """The table of `prices.json`, read once."""
    return read_price_file(resources.files(__package__).joinpath("prices.json").read_text(encoding="utf-8"))


def with_built_in(overrides: Mapping[str, Mapping[str, float]]) -> dict[str, Mapping[str, float]]:
    """The built-in table with the settings' entries added, each replacing a built-in one of its name."""
    return {**built_in_prices(), **overrides}


def _price(provider: str, model: str, entry: Mapping[str, Any]) -> dict[str, float]:
    if not all(_is_amount(entry.get(side)) for side in ("input", "output")):
        raise ValueError(f"{provider}'s {model} needs an input and an output price of 0 or more")
    return {"input": float(entry["input"]), "output": float(entry["output"])}


def _is_amount(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value >= 0
