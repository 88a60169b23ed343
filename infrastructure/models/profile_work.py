"""One kind of model work (memory upkeep's summaries or entities, titles, follow-up questions) on
whichever model profile an agent names: `OnProfile` for the use cases
(application/ports/profile_work.py).

A profile of the offline scripted model gets the offline adapter (extractive, rule-based, templated:
no model call), as the offline default always has. Any other gets the LLM adapter over that
profile's own model, its calls metered, recorded in the ledger and traced under the work's purpose
and the profile's name, at the profile's price, as a turn's calls are. That adapter is made afresh
at each call (it only holds its model, so it costs nothing): none outlives the registry's model,
which `ChatModelRegistry.aclose` drops. A profile not configured here is a `ModelError`, never
another profile's model in its place: the agent's conversations reach only its own chat models.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

from application.errors import ModelError
from application.ports.profile_work import OnProfile
from infrastructure.models.provider_config import TokenPrice
from infrastructure.models.provider_recipes import provider_recipe

if TYPE_CHECKING:
    from collections.abc import Callable

    from application.ports.chat_model import ChatModel
    from application.ports.chat_models import ChatModels, ModelProfile
    from application.ports.model_metrics import ModelPurpose
    from infrastructure.models.observed_models import ModelObserver

T = TypeVar("T")


class OnProfiles(OnProfile[T]):
    def __init__(
        self,
        models: ChatModels,
        purpose: ModelPurpose,
        offline: T,
        llm: Callable[[ChatModel], T],
        observer: ModelObserver,
    ) -> None:
        """`models`: the profiles' own models (the registry, not decorated); `offline`: the work of a
        scripted profile; `llm`: the LLM adapter over a model."""
        self._models = models
        self._purpose = purpose
        self._offline = offline
        self._llm = llm
        self._observer = observer  # counts, bills and traces each call of the profile's model
        self._profiles: dict[str, ModelProfile] | None = None

    def __call__(self, profile: str, /) -> T:
        if self._profiles is None:  # the profiles never change once built
            self._profiles = {p.name: p for p in self._models.profiles()}
        known = self._profiles.get(profile)
        model = self._models.get(profile) if known is not None else None
        if known is None or model is None:
            raise ModelError(f"The model profile {profile!r} is not configured on this server.")
        if provider_recipe(known.provider).offline:
            return self._offline
        price = TokenPrice(known.input_price, known.output_price)
        return self._llm(self._observer.chat_model(model, self._purpose, profile, price))
