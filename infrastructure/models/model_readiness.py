"""Readiness of the model profiles: an OpenAI-protocol server must answer `GET {base_url}/models`.

That request is free and fast on every OpenAI-compatible server we know; a server that answers it
at all (even 404: some do not list their models) is up, unless it refuses the key (401, 403) or
fails (5xx). The scripted model is in process and always ready. An AgentScope model has nothing
cheap to ask across its classes (each talks to its vendor in its own way), so it is `unchecked`.
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING

import httpx2

from application.ports.readiness import FAILING, OK, REJECTED, TIMEOUT, UNCHECKED, UNREACHABLE, ReadinessProbe
from infrastructure.models.provider_recipes import provider_recipe

if TYPE_CHECKING:
    from collections.abc import Sequence

    from infrastructure.models.model_profiles import ProfileSpec
    from infrastructure.models.provider_config import ProviderConfig

logger = logging.getLogger(__name__)

# What the openai SDK uses when no base URL is given (interfaces/settings/llm.py leaves it to the SDK).
OPENAI_BASE_URL = "https://api.openai.com/v1"
PROBE_TIMEOUT = 5.0  # seconds; /readyz bounds every probe by about as much again


class FixedProbe(ReadinessProbe):
    """A part whose state is known without asking: the scripted model, an unchecked model."""

    def __init__(self, part: str, state: str) -> None:
        self._part = part
        self._state = state

    @property
    def part(self) -> str:
        return self._part

    async def state(self) -> str:
        return self._state


class OpenAIModelProbe(ReadinessProbe):
    def __init__(self, profile: str, config: ProviderConfig, timeout: float = PROBE_TIMEOUT) -> None:
        self._profile = profile
        self._config = config
        self._timeout = timeout

    @property
    def part(self) -> str:
        return f"model:{self._profile}"

    async def state(self) -> str:
        base = self._config.base_url or os.environ.get("OPENAI_BASE_URL") or OPENAI_BASE_URL
        url = base.rstrip("/") + "/models"
        key = self._config.api_key
        try:
            async with httpx2.AsyncClient(timeout=self._timeout) as http:
                response = await http.get(url, headers={"Authorization": f"Bearer {key}"} if key else {})
        except httpx2.HTTPError as exc:
            state = TIMEOUT if isinstance(exc, httpx2.TimeoutException) else UNREACHABLE
            return self._failed(url, state, type(exc).__name__)
        if response.status_code in (401, 403):
            return self._failed(url, REJECTED, f"HTTP {response.status_code}")
        if response.status_code >= 500:
            return self._failed(url, FAILING, f"HTTP {response.status_code}")
        return OK

    def _failed(self, url: str, state: str, why: str) -> str:
        # The URL holds no credentials (refused by the settings); the key travels in a header only.
        logger.warning("readiness: model profile %r at %s is %s: %s", self._profile, url, state, why)
        return state


def model_probes(specs: Sequence[ProfileSpec]) -> list[ReadinessProbe]:
    """One probe per profile, in the profiles' order."""
    return [_probe(spec) for spec in specs]


def _probe(spec: ProfileSpec) -> ReadinessProbe:
    recipe = provider_recipe(spec.provider)
    if recipe.probe is not None:
        return recipe.probe(spec)
    return FixedProbe(f"model:{spec.name}", OK if recipe.offline else UNCHECKED)
