"""The agent config's JSON Schema in the API spec and what the config codec accepts are the same fields."""

from __future__ import annotations

from typing import Any

from domain.agents.config import AgentConfig
from domain.agents.config_codec import config_to_dict
from domain.ids import AppId
from interfaces.http.agent_schemas import CONFIG_SCHEMA


def fields(value: dict[str, Any], prefix: str = "") -> set[str]:
    names = set()
    for key, inner in value.items():
        names.add(prefix + key)
        if isinstance(inner, dict):
            names |= fields(inner, f"{prefix}{key}.")
    return names


def schema_fields(schema: dict[str, Any], prefix: str = "") -> set[str]:
    names = set()
    for key, inner in schema["properties"].items():
        names.add(prefix + key)
        if inner.get("type") == "object":
            names |= schema_fields(inner, f"{prefix}{key}.")
    return names


def test_the_spec_describes_exactly_the_fields_the_codec_reads() -> None:
    assert schema_fields(CONFIG_SCHEMA) == fields(config_to_dict(AgentConfig(AppId("a"))))
