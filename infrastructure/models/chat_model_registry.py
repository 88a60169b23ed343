"""The chat models of the model profiles, behind the ChatModels port.

The registry is the factory of the profiles' models: each one of MEMAGENT_MODELS is built on its first
`get`, with the adapter of its provider, and kept. The `default` profile's model is not built here:
it is the container's own `chat_model`, which the container builds and
closes; the registry only hands it out. Building a model does no I/O (the adapters connect on first
call), and the keys were read when the specs were built (`model_profiles.profile_specs`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.ports.chat_models import ChatModels, ModelProfile
from infrastructure.models.model_profiles import DEFAULT
from infrastructure.models.provider_recipes import provider_recipe

if TYPE_CHECKING:
    from collections.abc import Sequence

    from application.ports.chat_model import ChatModel
    from application.ports.runtime import Tokenizer
    from infrastructure.models.model_profiles import ProfileSpec


class ChatModelRegistry(ChatModels):
    def __init__(self, default: ChatModel, specs: Sequence[ProfileSpec], tokenizer: Tokenizer) -> None:
        """`specs`: `default` first (`profile_specs`); `default`: the model of that first spec."""
        if not specs or specs[0].name != DEFAULT:
            raise ValueError("the first profile spec must be 'default'")
        self._specs = {spec.name: spec for spec in specs}
        self._tokenizer = tokenizer
        self._models: dict[str, ChatModel] = {DEFAULT: default}
        self._built: list[ChatModel] = []

    def profiles(self) -> list[ModelProfile]:
        return [spec.profile for spec in self._specs.values()]

    def get(self, name: str) -> ChatModel | None:
        model = self._models.get(name)
        if model is None and name in self._specs:
            model = self._models[name] = self._build(self._specs[name])
            self._built.append(model)
        return model

    async def aclose(self) -> None:
        """Closes the models this registry built (not `default`'s); call it on the loop that used them."""
        built, self._built = self._built, []
        for model in built:
            close = getattr(model, "aclose", None)  # providers with a connection pool have one
            if close is not None:
                await close()
        self._models = {DEFAULT: self._models[DEFAULT]}

    def _build(self, spec: ProfileSpec) -> ChatModel:
        return provider_recipe(spec.provider).build(spec, self._tokenizer)
