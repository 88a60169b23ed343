"""MEMAGENT_LLM__* and MEMAGENT_MODELS: the default chat model and the named profiles agents may pick."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, SecretStr, model_validator
from pydantic_core import PydanticCustomError

from application.errors import ModelError
from infrastructure.models.model_profiles import name_problem, read_key
from infrastructure.models.provider_config import base_url_problem
from infrastructure.models.provider_recipes import provider_names


def _registered(provider: str) -> str:
    if provider not in provider_names():
        raise PydanticCustomError("provider", "Input should be one of {names}", {"names": ", ".join(provider_names())})
    return provider


# The providers of infrastructure/models/provider_recipes.py: one registered there is one a profile may name.
Provider = Annotated[str, AfterValidator(_registered)]


class CapabilityOverrides(BaseModel):
    """Set one to override what the model-name table says (e.g. a fine-tune without tools)."""

    tool_call: bool | None = None
    agent_thought: bool | None = None
    image_input: bool | None = None
    structured_output: bool | None = None  # takes `response_format` (JSON mode, JSON Schema) itself


class ModelPrice(BaseModel):
    """USD per million tokens."""

    input: float = Field(ge=0)
    output: float = Field(ge=0)


class LLMSettings(BaseModel):
    """The chat model. `prices` maps a model name (or a prefix of one) to its token prices, over the
    built-in table (infrastructure/models/prices.json), replacing its entry of the same name,
    e.g. MEMAGENT_LLM__PRICES='{"gpt-4o-mini": {"input": 0.15, "output": 0.6}}'."""

    provider: Provider = "scripted"
    base_url: str | None = None
    api_key: SecretStr | None = None
    model: str = "gpt-4o-mini"
    temperature: float = Field(0.7, ge=0, le=2)
    timeout: float = Field(60.0, gt=0)
    max_retries: int = Field(2, ge=0, description="retries of a call that failed before its first chunk")
    retry_initial_delay: float = Field(0.5, ge=0, description="seconds; backoff doubles from it, jittered")
    retry_max_delay: float = Field(8.0, ge=0, description="seconds; also caps a server's Retry-After")
    capabilities: CapabilityOverrides = CapabilityOverrides()
    prices: dict[str, ModelPrice] = {}
    agentscope_class: str = Field("OpenAIChatModel", description="a class of agentscope.model")
    agentscope_kwargs: dict[str, Any] = Field(
        default_factory=dict, description="JSON: extra constructor arguments of that class"
    )
    scripted_chunk_delay: float = Field(0.0, ge=0, description="seconds between scripted chunks")


class ModelProfileSettings(BaseModel):
    """One entry of MEMAGENT_MODELS: a named chat model agents may pick. Its key comes from the environment
    variable `api_key_env` names or from the secrets file `api_key_file`; a key itself is refused.
    What it leaves out (temperature, timeout, max_retries) it takes from MEMAGENT_LLM__*."""

    model_config = ConfigDict(extra="forbid")

    name: str
    provider: Provider
    base_url: str | None = None
    model: str = Field(min_length=1)
    api_key_env: str | None = Field(None, description="the NAME of an environment variable holding the key")
    api_key_file: str | None = Field(None, description="a secrets file holding the key")
    capabilities: CapabilityOverrides = CapabilityOverrides()
    price: ModelPrice | None = Field(None, description="else MEMAGENT_LLM__PRICES or the built-in table, else free")
    temperature: float | None = Field(None, ge=0, le=2)
    timeout: float | None = Field(None, gt=0)
    max_retries: int | None = Field(None, ge=0)
    agentscope_class: str = Field("OpenAIChatModel", description="a class of agentscope.model")
    agentscope_kwargs: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _no_key_inside(cls, data: Any) -> Any:
        if isinstance(data, dict) and "api_key" in data:
            raise ValueError("a key goes in the environment variable api_key_env names, or in api_key_file")
        return data

    @model_validator(mode="after")
    def _usable(self) -> ModelProfileSettings:
        problem = base_url_problem(self.base_url) if self.base_url else None
        try:
            read_key(self.api_key_env, self.api_key_file)  # read at start-up, so that it fails here
        except ModelError as unreadable:
            problem = problem or unreadable.message
        if problem:
            raise ValueError(f"profile {self.name!r}: {problem}")
        return self


def _profile_names(models: list[ModelProfileSettings]) -> list[ModelProfileSettings]:
    taken: list[str] = []
    for profile in models:
        problem = name_problem(profile.name, taken)
        if problem is not None:
            raise ValueError(problem)
        taken.append(profile.name)
    return models


# The list as a whole is checked too: a profile's name must be unique and not `default`.
ModelProfiles = Annotated[list[ModelProfileSettings], AfterValidator(_profile_names)]
