"""The settings a provider adapter needs, as one plain value built from `Settings.llm`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from domain.agents.config import ModelCapabilities
from domain.billing.model_calls import cost_of
from domain.conversations.messages import Usage
from infrastructure.models.capabilities import capabilities_for
from infrastructure.models.price_table import with_built_in

if TYPE_CHECKING:
    from collections.abc import Mapping


@dataclass(frozen=True, slots=True)
class TokenPrice:
    """USD per million tokens."""

    input: float
    output: float

    def usage(self, prompt_tokens: int, completion_tokens: int) -> Usage:
        price = cost_of(prompt_tokens, completion_tokens, self.input, self.output)
        return Usage(prompt_tokens, completion_tokens, round(price, 10))


FREE = TokenPrice(0.0, 0.0)
# Local servers (Ollama, vLLM) need no key, but the SDKs refuse to start without one.
NO_KEY = "no-key"


@dataclass(frozen=True, slots=True)
class ProviderConfig:
    model: str
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)  # never in a log line or a traceback
    temperature: float = 0.7
    timeout: float = 60.0
    max_retries: int = 2
    retry_initial_delay: float = 0.5
    retry_max_delay: float = 8.0
    capabilities: ModelCapabilities = field(default_factory=ModelCapabilities)
    price: TokenPrice = FREE


def base_url_problem(url: str) -> str | None:
    """Why a model's base URL cannot be used, or None; never quotes it. A URL holding credentials
    (`https://user:pass@host/v1`) is refused rather than sent: the SDKs do not turn them into a
    header, so every call would fail; the key belongs in the API key setting (sent as a Bearer token)."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 -- reading it checks it
    except ValueError:
        return "the port of the base URL is not a number from 0 to 65535"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "the base URL is not an http:// or https:// URL with a host"
    if parts.username is not None or parts.password is not None:
        return "the base URL holds a user name or password (user:pass@); put the key in the API key setting instead"
    return None


def listed_price(model: str, table: Mapping[str, Mapping[str, float]]) -> TokenPrice | None:
    """The entry for `model`, else for the longest name it starts with (a dated snapshot like
    `gpt-4o-mini-2024-07-18` costs what `gpt-4o-mini` costs); None for a model not listed."""
    matches = [name for name in table if model.startswith(name)]
    if not matches:
        return None
    entry = table[max(matches, key=len)]
    return TokenPrice(float(entry["input"]), float(entry["output"]))


def price_for(model: str, table: Mapping[str, Mapping[str, float]]) -> TokenPrice:
    """`listed_price`, where a model not listed is free."""
    return listed_price(model, table) or FREE


def provider_config(llm: Mapping[str, Any]) -> ProviderConfig:
    """From the plain `llm` settings the container holds (the API key already unwrapped); its price
    comes from MEMAGENT_LLM__PRICES over the built-in table (`price_table`)."""
    model = str(llm["model"])
    return ProviderConfig(
        model=model,
        base_url=llm.get("base_url"),
        api_key=llm.get("api_key"),
        temperature=float(llm["temperature"]),
        timeout=float(llm["timeout"]),
        max_retries=int(llm["max_retries"]),
        retry_initial_delay=float(llm["retry_initial_delay"]),
        retry_max_delay=float(llm["retry_max_delay"]),
        capabilities=capabilities_for(model, llm.get("capabilities") or {}),
        price=price_for(model, with_built_in(llm.get("prices") or {})),
    )
