"""A config as a client sent it (plain data), read into an AgentConfig or refused with every problem named."""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.errors import InvalidInput
from domain.agents.config_codec import InvalidConfig, config_from_dict

if TYPE_CHECKING:
    from domain.agents.config import AgentConfig
    from domain.ids import AppId


def read_config(agent_id: AppId, data: object) -> AgentConfig:
    """What is missing is filled from the defaults; unknown fields and bad values are refused."""
    try:
        return config_from_dict(agent_id, data)
    except InvalidConfig as invalid:
        raise InvalidInput(f"The config is invalid: {'; '.join(invalid.problems)}.") from invalid
