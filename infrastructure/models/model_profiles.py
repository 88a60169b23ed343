"""Model profiles: the named chat models an agent may pick, as plain specs built from settings.

`default` is the model of the `MEMAGENT_LLM__*` settings; `MEMAGENT_MODELS` adds the others. A spec
holds what building its model needs (`ProviderConfig`, the AgentScope class…) and what the API may show
of it (`ModelProfile`): never its key, which stays in `ProviderConfig.api_key` (kept out of `repr`).

Keys come only from the environment (`api_key_env`: the NAME of a variable) or a secrets file
(`api_key_file`), never from the profile itself. They are read here, when the specs are built from the
settings (`profile_specs`, called once by the container), not in an adapter's constructor: building a
model stays free of I/O, and a key that cannot be read fails where the settings are read (the settings
check at start-up uses `read_key` too).

What a profile leaves out it takes from `MEMAGENT_LLM__*` (temperature, timeout, retries, the scripted
model's delay), except its base URL and key, which never carry over from one model to another. Its
price is its own `price`, else the entry for its model in `MEMAGENT_LLM__PRICES` over the built-in
table (`price_table`); with none it is unpriced (`priced` False, shown as such by `GET /api/models`)
and its calls cost 0. The scripted model is free, and priced as such: its price is known.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from application.errors import ModelError
from application.ports.chat_models import ModelProfile
from infrastructure.models.capabilities import capabilities_for
from infrastructure.models.price_table import with_built_in
from infrastructure.models.provider_config import FREE, ProviderConfig, TokenPrice, listed_price, provider_config
from infrastructure.models.provider_recipes import ProviderRecipe, provider_recipe

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

DEFAULT = "default"
NAME_PATTERN = re.compile(r"[A-Za-z0-9_.-]{1,64}")
SETTING = "MEMAGENT_MODELS"


@dataclass(frozen=True, slots=True)
class ProfileSpec:
    """One profile: how to build its model (`provider`, `config`, the AgentScope class) and what it costs."""

    name: str
    provider: str
    config: ProviderConfig  # its api_key is kept out of repr
    priced: bool = False
    agentscope_class: str = "OpenAIChatModel"
    agentscope_kwargs: Mapping[str, Any] = field(default_factory=dict, repr=False)  # may hold a credential
    scripted_chunk_delay: float = 0.0

    @property
    def profile(self) -> ModelProfile:
        price = self.config.price
        return ModelProfile(
            self.name, self.provider, self.config.model, self.config.capabilities, price.input, price.output,
            self.priced,
        )


def read_key(api_key_env: str | None, api_key_file: str | None, environ: Mapping[str, str] | None = None) -> str | None:
    """The key named by a profile, whitespace-stripped; None when it names none. Raises `ModelError`
    (naming the variable or the file, never the key) when it cannot be read or is empty."""
    if api_key_env and api_key_file:
        raise ModelError("give api_key_env or api_key_file, not both")
    if api_key_env:
        key = (os.environ if environ is None else environ).get(api_key_env, "").strip()
        if not key:
            raise ModelError(f"the environment variable {api_key_env} (api_key_env) is not set or empty")
        return key
    if api_key_file:
        try:
            key = Path(api_key_file).read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as unreadable:
            why = unreadable.strerror if isinstance(unreadable, OSError) else "it is not UTF-8 text"
            raise ModelError(f"the api_key_file {api_key_file} cannot be read: {why}") from None
        if not key:
            raise ModelError(f"the api_key_file {api_key_file} is empty")
        return key
    return None


def default_spec(llm: Mapping[str, Any]) -> ProfileSpec:
    """The `default` profile, from the plain `llm` settings the container holds (the key unwrapped);
    its config is the one `provider_config` gives the container's own chat model."""
    provider = str(llm["provider"])
    recipe = _recipe(DEFAULT, provider)
    config = _model_config(recipe, provider_config(llm))
    priced = recipe.offline or listed_price(config.model, with_built_in(llm.get("prices") or {})) is not None
    return _spec(DEFAULT, provider, config, priced, llm, llm)


def profile_spec(
    entry: Mapping[str, Any], llm: Mapping[str, Any], environ: Mapping[str, str] | None = None
) -> ProfileSpec:
    """One entry of MEMAGENT_MODELS (as the settings dump it), reading its key."""
    name, provider = str(entry["name"]), str(entry["provider"])
    recipe = _recipe(name, provider)
    try:
        api_key = read_key(entry.get("api_key_env"), entry.get("api_key_file"), environ)
    except ModelError as unreadable:
        raise ModelError(f"{SETTING}: profile {name!r}: {unreadable.message}") from None
    model = str(entry["model"])
    price = _price(entry.get("price"), model, with_built_in(llm.get("prices") or {}))
    config = ProviderConfig(
        model=model,
        base_url=entry.get("base_url"),
        api_key=api_key,
        temperature=float(_given(entry, llm, "temperature")),
        timeout=float(_given(entry, llm, "timeout")),
        max_retries=int(_given(entry, llm, "max_retries")),
        retry_initial_delay=float(llm["retry_initial_delay"]),
        retry_max_delay=float(llm["retry_max_delay"]),
        capabilities=capabilities_for(model, entry.get("capabilities") or {}),
        price=price or FREE,
    )
    priced = recipe.offline or price is not None
    return _spec(name, provider, _model_config(recipe, config), priced, entry, llm)


def profile_specs(
    llm: Mapping[str, Any], models: Sequence[Mapping[str, Any]], environ: Mapping[str, str] | None = None
) -> list[ProfileSpec]:
    """`default` first, then MEMAGENT_MODELS in its order. Raises `ModelError` naming MEMAGENT_MODELS
    for a name that is malformed, taken twice or `default` (the settings refuse those already)."""
    specs = [default_spec(llm)]
    for entry in models:
        problem = name_problem(str(entry["name"]), [s.name for s in specs])
        if problem is not None:
            raise ModelError(f"{SETTING}: {problem}")
        specs.append(profile_spec(entry, llm, environ))
    return specs


def name_problem(name: str, taken: Sequence[str]) -> str | None:
    """Why `name` cannot name a profile of MEMAGENT_MODELS, or None; `taken`: the names before it."""
    if not NAME_PATTERN.fullmatch(name):
        return f"profile name {name!r} must be 1-64 letters, digits, '_', '.' or '-'"
    if name == DEFAULT:
        return "the name 'default' is the MEMAGENT_LLM__* model's; give the profile another name"
    if name in taken:
        return f"profile name {name!r} is used twice"
    return None


def _spec(
    name: str, provider: str, config: ProviderConfig, priced: bool, entry: Mapping[str, Any], llm: Mapping[str, Any]
) -> ProfileSpec:
    return ProfileSpec(
        name, provider, config, priced,
        agentscope_class=str(entry.get("agentscope_class") or "OpenAIChatModel"),
        agentscope_kwargs=dict(entry.get("agentscope_kwargs") or {}),
        scripted_chunk_delay=float(llm.get("scripted_chunk_delay") or 0.0),
    )


def _recipe(name: str, provider: str) -> ProviderRecipe:
    try:
        return provider_recipe(provider)
    except ModelError as unknown:
        raise ModelError(f"{SETTING}: profile {name!r}: {unknown.message}") from None


def _model_config(recipe: ProviderRecipe, config: ProviderConfig) -> ProviderConfig:
    """The profile's model config, as its provider makes it (the scripted model is what it is)."""
    return recipe.config(config) if recipe.config is not None else config


def _price(
    given: Mapping[str, float] | None, model: str, table: Mapping[str, Mapping[str, float]]
) -> TokenPrice | None:
    if given is not None:
        return TokenPrice(float(given["input"]), float(given["output"]))
    return listed_price(model, table)


def _given(entry: Mapping[str, Any], llm: Mapping[str, Any], key: str) -> Any:
    value = entry.get(key)
    return llm[key] if value is None else value
