"""The one switch on the LLM provider: what memagent needs to know of each, in one recipe.

A profile (the `default` one of MEMAGENT_LLM__*, and each of MEMAGENT_MODELS) names its provider;
every part that depends on the provider asks its recipe here: the profiles' registry builds the
model with `build`, the profile specs take the model's `config` from it, readiness asks `probe`,
and the wiring asks `offline` (no model call: memory upkeep after every turn, extractive and
rule-based memory work, titles from the first words). Adding a provider is one `register_provider`
call (docs/contributing.md, "How to add an adapter").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from application.errors import ModelError
from infrastructure.models import scripted_model
from infrastructure.models.provider_config import ProviderConfig
from infrastructure.models.provider_models import agentscope_chat_model, openai_chat_model

if TYPE_CHECKING:
    from collections.abc import Callable

    from application.ports.chat_model import ChatModel
    from application.ports.readiness import ReadinessProbe
    from application.ports.runtime import Tokenizer
    from infrastructure.models.model_profiles import ProfileSpec


@dataclass(frozen=True, slots=True)
class ProviderRecipe:
    name: str
    build: Callable[[ProfileSpec, Tokenizer], ChatModel]  # the profile's model; no I/O
    offline: bool = False  # its work makes no model call (and costs nothing)
    probe: Callable[[ProfileSpec], ReadinessProbe] | None = None  # None: readiness reports it unchecked
    config: Callable[[ProviderConfig], ProviderConfig] | None = None  # the model's config, over the profile's


_RECIPES: dict[str, ProviderRecipe] = {}


def register_provider(recipe: ProviderRecipe) -> None:
    """Makes `recipe.name` a provider a profile may name (replacing one of that name)."""
    _RECIPES[recipe.name] = recipe


def provider_names() -> tuple[str, ...]:
    return tuple(_RECIPES)


def provider_recipe(name: str) -> ProviderRecipe:
    """Raises `ModelError` naming the providers there are."""
    recipe = _RECIPES.get(name)
    if recipe is None:
        raise ModelError(f"provider must be one of {', '.join(_RECIPES)}")
    return recipe


def default_chat_model(specs: list[ProfileSpec], tokenizer: Tokenizer) -> ChatModel:
    """The `default` profile's model (the first spec): the container's own chat model."""
    return provider_recipe(specs[0].provider).build(specs[0], tokenizer)


def _openai_probe(spec: ProfileSpec) -> ReadinessProbe:
    from infrastructure.models.model_readiness import OpenAIModelProbe  # its HTTP client: only when probed

    return OpenAIModelProbe(spec.name, spec.config)


def _scripted_config(_: ProviderConfig) -> ProviderConfig:
    """The scripted model is what it is, whatever the profile says its model is."""
    return ProviderConfig(model=scripted_model.NAME, capabilities=scripted_model.CAPABILITIES)


register_provider(ProviderRecipe(
    "scripted",
    lambda spec, tokenizer: scripted_model.ScriptedChatModel(tokenizer, chunk_delay=spec.scripted_chunk_delay),
    offline=True, config=_scripted_config,
))
register_provider(ProviderRecipe("openai", lambda spec, _: openai_chat_model(spec.config), probe=_openai_probe))
register_provider(ProviderRecipe(
    "agentscope", lambda spec, _: agentscope_chat_model(spec.config, spec.agentscope_class, spec.agentscope_kwargs),
))
